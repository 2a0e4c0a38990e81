/*
** tensor.c — tensor headers: creation, refcounts, geometry helpers.
*/
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "core/backend.h"

_Thread_local bool lt_tls_inference_mode = false;
_Thread_local bool lt_tls_inplace_op = false;
void (*lt_tensor_free_hook)(lt_tensor *t) = NULL;
static atomic_llong live_tensors;

int64_t lt_tensor_live_count(void) { return atomic_load(&live_tensors); }

static lt_keyset keys_for(lt_device dev) {
  lt_keyset k = lt_device_keys(dev);
  if (!lt_tls_inference_mode) k |= LT_KEYBIT(LT_KEY_AUTOGRAD);
  return k;
}

static _Thread_local int8_t current_index[2];

int lt_device_current(int type) { return type >= 0 && type < 2 ? current_index[type] : 0; }

void lt_device_set_current(int type, int index) {
  if (type >= 0 && type < 2 && index >= 0 && index < 128) current_index[type] = (int8_t)index;
}

int lt_device_parse(const char *s, lt_device *out) {
  if (strcmp(s, "cpu") == 0) { out->type = LT_DEV_CPU; out->index = 0; return 0; }
  if (strcmp(s, "meta") == 0 || strcmp(s, "meta:0") == 0) { out->type = LT_DEV_META; out->index = 0; return 0; }
  if (strncmp(s, "cuda", 4) == 0) {
    out->type = LT_DEV_CUDA; out->index = current_index[LT_DEV_CUDA];
    if (s[4] == 0) return 0;
    if (s[4] == ':') {
      char *end; long i = strtol(s + 5, &end, 10);
      if (end != s + 5 && *end == 0 && i >= 0 && i < 128) { out->index = (int8_t)i; return 0; }
    }
  }
  return lt_error("invalid device '%s' (expected \"cpu\", \"cuda\", \"cuda:N\" or \"meta\")", s);
}

void lt_device_format(lt_device d, char *buf, size_t n) {
  if (d.type == LT_DEV_CPU) snprintf(buf, n, "cpu");
  else if (d.type == LT_DEV_META) snprintf(buf, n, "meta");
  else snprintf(buf, n, "cuda:%d", d.index);
}

lt_dtype lt_scalar_dtype(lt_scalar s) {
  switch (s.type) {
    case LT_SCALAR_INT: return LT_INT64;
    case LT_SCALAR_BOOL: return LT_BOOL;
    case LT_SCALAR_COMPLEX: return lt_dtype_to_complex(lt_get_default_dtype());
    default: return lt_get_default_dtype();
  }
}

void lt_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
  int64_t st = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = st;
    st *= sizes[i] > 1 ? sizes[i] : 1;
  }
}

int64_t lt_shape_numel(int ndim, const int64_t *sizes) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= sizes[i];
  return n;
}

/* Freed headers wait in a small per-thread list: an op on tiny tensors would
** otherwise spend most of its time in malloc and free. */
#ifdef __SANITIZE_ADDRESS__
#define HEADER_CACHE_MAX 0     /* let AddressSanitizer see every use after free */
#else
#define HEADER_CACHE_MAX 4096
#endif
static _Thread_local lt_tensor *header_cache = NULL;
static _Thread_local int header_cache_n = 0;

static lt_tensor *alloc_header(void) {
  lt_tensor *t = header_cache;
  if (t) {
    header_cache = t->grad;      /* the list links through the grad slot */
    header_cache_n--;
  } else {
    t = malloc(sizeof(lt_tensor));
  }
  if (!t) return lt_error_null("out of memory allocating a tensor");
  atomic_init(&t->refcount, 1);
  t->requires_grad = false;
  t->is_wrapped_number = false;
  t->grad = NULL;
  t->grad_fn = NULL;
  t->output_nr = 0;
  t->autograd = NULL;
  atomic_fetch_add_explicit(&live_tensors, 1, memory_order_relaxed);
  return t;
}

static int check_shape(int ndim, const int64_t *sizes, int64_t *numel) {
  if (ndim < 0 || ndim > LT_MAX_DIMS)
    return lt_error("tensors have at most %d dims, got %d", LT_MAX_DIMS, ndim);
  /* the sizes other than 0 must multiply without overflow too: they make the strides */
  int64_t n = 1, span = 1;
  for (int i = 0; i < ndim; i++) {
    if (sizes[i] < 0) return lt_error("negative size %lld in dim %d", (long long)sizes[i], i + 1);
    if (sizes[i] && span > INT64_MAX / 8 / sizes[i]) return lt_error("tensor size overflows");
    if (sizes[i]) span *= sizes[i];
    n *= sizes[i];
  }
  *numel = n;
  return 0;
}

lt_tensor *lt_tensor_new_view(lt_storage *s, lt_dtype dt, int64_t offset, int ndim,
                              const int64_t *sizes, const int64_t *strides) {
  int64_t numel;
  if (check_shape(ndim, sizes, &numel) < 0) return NULL;
  lt_tensor *t = alloc_header();
  if (!t) return NULL;
  t->ndim = (int8_t)ndim;
  t->dtype = (uint8_t)dt;
  t->storage = s;
  lt_storage_retain(s);
  t->offset = offset;
  t->numel = numel;
  t->keys = keys_for(s->device);
  if (ndim > 0) memcpy(t->sizes, sizes, sizeof(int64_t) * ndim);
  if (strides && ndim > 0) memcpy(t->strides, strides, sizeof(int64_t) * ndim);
  else lt_contiguous_strides(ndim, sizes, t->strides);
  return t;
}

lt_tensor *lt_tensor_new(lt_dtype dt, lt_device dev, int ndim, const int64_t *sizes) {
  int64_t numel;
  if (check_shape(ndim, sizes, &numel) < 0) return NULL;
  lt_storage *s = lt_storage_new(dev, (size_t)numel * lt_dtype_size(dt));
  if (!s) return NULL;
  lt_tensor *t = lt_tensor_new_view(s, dt, 0, ndim, sizes, NULL);
  lt_storage_release(s);
  return t;
}

lt_tensor *lt_tensor_new_zeros(lt_dtype dt, lt_device dev, int ndim, const int64_t *sizes) {
  lt_tensor *t = lt_tensor_new(dt, dev, ndim, sizes);
  if (t && dev.type == LT_DEV_CPU) memset(t->storage->data, 0, t->storage->nbytes);   /* host memory */
  else if (t && lt_tensor_fill_(t, lt_scalar_int(0)) < 0) { lt_tensor_release(t); return NULL; }
  return t;
}

lt_tensor *lt_tensor_new_like(const lt_tensor *t, lt_dtype dt) {
  return lt_tensor_new(dt, lt_tensor_device(t), t->ndim, t->sizes);
}

lt_tensor *lt_tensor_alias(const lt_tensor *t, int64_t offset, int ndim,
                           const int64_t *sizes, const int64_t *strides) {
  return lt_tensor_new_view(t->storage, (lt_dtype)t->dtype, offset, ndim, sizes, strides);
}

lt_tensor *lt_tensor_from_blob(void *data, lt_dtype dt, int ndim, const int64_t *sizes,
                               const int64_t *strides, void (*release)(void *, void *), void *ctx) {
  int64_t numel;
  if (check_shape(ndim, sizes, &numel) < 0) return NULL;
  /* the storage must span every element the strides can reach */
  int64_t span = numel ? 1 : 0;
  for (int i = 0; i < ndim && numel; i++) {
    int64_t st = strides ? strides[i] : 0;
    if (st < 0) return lt_error_null("from_blob: negative strides are not supported");
    span += (sizes[i] - 1) * st;
  }
  if (!strides) span = numel;
  lt_storage *s = lt_storage_from_blob(data, (size_t)span * lt_dtype_size(dt), lt_device_cpu(), release, ctx);
  if (!s) return NULL;
  lt_tensor *t = lt_tensor_new_view(s, dt, 0, ndim, sizes, strides);
  /* on failure the caller still owns its memory, as on every other failure
  ** path: the release callback runs for memory a tensor took, never otherwise */
  if (!t) s->release = NULL;
  lt_storage_release(s);
  return t;
}

lt_tensor *lt_tensor_from_scalar(lt_scalar v, lt_dtype dt) {
  lt_tensor *t = lt_tensor_new(dt, lt_device_cpu(), 0, NULL);
  if (!t) return NULL;
  if (v.type == LT_SCALAR_COMPLEX) lt_dtype_store_complex(dt, t->storage->data, v.v.f, v.im);
  else if (v.type == LT_SCALAR_FLOAT) lt_dtype_store_double(dt, t->storage->data, v.v.f);
  else lt_dtype_store_int64(dt, t->storage->data, v.v.i);
  return t;
}

lt_tensor *lt_tensor_wrapped_number(lt_scalar v) {
  /* a complex value is wrapped as complex128, as a float one as float64: wrapped
  ** numbers promote by category, so the width never decides a result's dtype */
  lt_tensor *t = lt_tensor_from_scalar(v, v.type == LT_SCALAR_FLOAT ? LT_FLOAT64
                                          : v.type == LT_SCALAR_COMPLEX ? LT_COMPLEX128 : lt_scalar_dtype(v));
  /* a Lua number goes with tensors on any device: it carries no backend key */
  if (t) { t->is_wrapped_number = true; t->keys &= ~LT_BACKEND_KEYS; }
  return t;
}

void lt_tensor_release(lt_tensor *t) {
  if (!t) return;
  if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1) return;
  if (lt_tensor_free_hook) lt_tensor_free_hook(t);
  lt_tensor_release(t->grad);
  lt_storage_release(t->storage);
  atomic_fetch_sub_explicit(&live_tensors, 1, memory_order_relaxed);
  if (header_cache_n < HEADER_CACHE_MAX) {
    t->grad = header_cache;
    header_cache = t;
    header_cache_n++;
  } else {
    free(t);
  }
}

bool lt_tensor_is_contiguous(const lt_tensor *t) {
  int64_t st = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->sizes[i] == 1) continue;
    if (t->strides[i] != st) return false;
    st *= t->sizes[i];
  }
  return true;
}

bool lt_tensor_same_shape(const lt_tensor *a, const lt_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->sizes[i] != b->sizes[i]) return false;
  return true;
}

lt_tensor *lt_tensor_clone_as(const lt_tensor *t, lt_dtype dt) {
  lt_tensor *r = lt_tensor_new(dt, lt_tensor_device(t), t->ndim, t->sizes);
  if (r && lt_tensor_copy_(r, t) < 0) { lt_tensor_release(r); return NULL; }
  return r;
}

lt_tensor *lt_tensor_contiguous(lt_tensor *t) {
  if (lt_tensor_is_contiguous(t)) { lt_tensor_retain(t); return t; }
  return lt_tensor_clone_as(t, (lt_dtype)t->dtype);
}

lt_tensor *lt_tensor_to_dtype_contig(lt_tensor *t, lt_dtype dt) {
  if (t->dtype == dt && lt_tensor_is_contiguous(t)) { lt_tensor_retain(t); return t; }
  return lt_tensor_clone_as(t, dt);
}

/* offset (in elements) of the element at a row-major linear position */
static int64_t linear_to_offset(const lt_tensor *t, int64_t linear) {
  int64_t off = t->offset;
  for (int i = t->ndim - 1; i >= 0; i--) {
    int64_t sz = t->sizes[i];
    off += (linear % sz) * t->strides[i];
    linear /= sz;
  }
  return off;
}

/* a storage without bytes (the meta device's) reads as zeros: the composites'
** data-dependent checks pass over it instead of dereferencing NULL */
double lt_tensor_get_double(const lt_tensor *t, int64_t linear) {
  if (!t->storage->data) return 0;
  size_t es = lt_dtype_size((lt_dtype)t->dtype);
  return lt_dtype_load_double((lt_dtype)t->dtype, (char *)t->storage->data + linear_to_offset(t, linear) * es);
}

int64_t lt_tensor_get_int64(const lt_tensor *t, int64_t linear) {
  if (!t->storage->data) return 0;
  size_t es = lt_dtype_size((lt_dtype)t->dtype);
  return lt_dtype_load_int64((lt_dtype)t->dtype, (char *)t->storage->data + linear_to_offset(t, linear) * es);
}

lt_scalar lt_tensor_item(const lt_tensor *t) {
  if (LT_IS_META(t)) {   /* PyTorch's words: there is no value to read */
    lt_error("item: Tensor.item() cannot be called on meta tensors");
    return lt_scalar_none();
  }
  if (t->numel != 1) {
    lt_error("item: a tensor with %lld elements cannot be converted to a number (need exactly 1)",
             (long long)t->numel);
    return lt_scalar_none();
  }
  lt_dtype dt = (lt_dtype)t->dtype;
  if (lt_dtype_is_complex(dt)) {   /* a Scalar is real: reading the real part alone would be wrong */
    lt_error("item: a %s tensor's element is not a real number", lt_dtype_name(dt));
    return lt_scalar_none();
  }
  lt_tensor *h = lt_tensor_to_host((lt_tensor *)t);   /* device memory is read through a host copy */
  if (!h) return lt_scalar_none();
  lt_scalar r;
  if (dt == LT_BOOL) r = lt_scalar_bool(lt_tensor_get_int64(h, 0) != 0);
  else if (lt_dtype_is_integral(dt)) r = lt_scalar_int(lt_tensor_get_int64(h, 0));
  else r = lt_scalar_float(lt_tensor_get_double(h, 0));
  lt_tensor_release(h);
  return r;
}

lt_scalar lt_tensor_item_complex(const lt_tensor *t) {
  lt_dtype dt = (lt_dtype)t->dtype;
  if (!lt_dtype_is_complex(dt) || t->numel != 1) return lt_tensor_item(t);
  lt_tensor *h = lt_tensor_to_host((lt_tensor *)t);
  if (!h) return lt_scalar_none();
  double re, im;
  lt_dtype_load_complex(dt, (char *)h->storage->data + h->offset * lt_dtype_size(dt), &re, &im);
  lt_tensor_release(h);
  return lt_scalar_complex(re, im);
}

/* ---- shape helpers ---- */

int lt_wrap_dim(const char *op, int64_t dim, int ndim) {
  int n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n)
    return lt_error("%s: dim %lld out of range for a tensor with %d dim%s (valid: 1..%d or -%d..-1)",
                    op, (long long)(dim >= 0 ? dim + 1 : dim), ndim, ndim == 1 ? "" : "s", n, n);
  return (int)(dim < 0 ? dim + n : dim);
}

const char *lt_shape_str(int ndim, const int64_t *sizes, char *buf, size_t n) {
  size_t k = 0;
  k += (size_t)snprintf(buf + k, n - k, "[");
  for (int i = 0; i < ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)sizes[i]);
  if (k < n) snprintf(buf + k, n - k, "]");
  return buf;
}

int lt_broadcast_shapes(const char *op, int na, const int64_t *a, int nb, const int64_t *b, int64_t *out) {
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int ia = na - n + i, ib = nb - n + i;
    int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      char ba[128], bb[128];
      return lt_error("%s: shapes %s and %s cannot be broadcast (dim %d: %lld vs %lld)", op,
                      lt_shape_str(na, a, ba, sizeof ba), lt_shape_str(nb, b, bb, sizeof bb),
                      i + 1, (long long)sa, (long long)sb);
    }
    out[i] = sa == 1 ? sb : sa;
  }
  return n;
}

int lt_expand_strides(const char *op, const lt_tensor *t, int ndim, const int64_t *sizes, int64_t *strides) {
  if (t->ndim > ndim) {
    char b1[128], b2[128];
    return lt_error("%s: cannot expand shape %s to %s", op, lt_shape_str(t->ndim, t->sizes, b1, sizeof b1),
                    lt_shape_str(ndim, sizes, b2, sizeof b2));
  }
  int lead = ndim - t->ndim;
  for (int i = 0; i < ndim; i++) {
    if (i < lead) { strides[i] = 0; continue; }
    int64_t s = t->sizes[i - lead];
    if (s == sizes[i]) strides[i] = s == 1 ? 0 : t->strides[i - lead];
    else if (s == 1) strides[i] = 0;
    else {
      char b1[128], b2[128];
      return lt_error("%s: cannot expand shape %s to %s", op, lt_shape_str(t->ndim, t->sizes, b1, sizeof b1),
                      lt_shape_str(ndim, sizes, b2, sizeof b2));
    }
  }
  return 0;
}

bool lt_out_resize_detaches = false;

int lt_tensor_resize_out(const char *op, lt_tensor *out, int ndim, const int64_t *sizes) {
  bool same = out->ndim == ndim;
  for (int i = 0; same && i < ndim; i++) same = out->sizes[i] == sizes[i];
  if (same) return 0;
  if (lt_tls_inplace_op) {
    char b1[128], b2[128];
    return lt_error("%s: output with shape %s doesn't match the broadcast shape %s", op,
                    lt_shape_str(out->ndim, out->sizes, b1, sizeof b1), lt_shape_str(ndim, sizes, b2, sizeof b2));
  }
  int64_t numel;
  if (check_shape(ndim, sizes, &numel) < 0) return -1;
  size_t need = (size_t)numel * lt_dtype_size((lt_dtype)out->dtype);
  if (out->storage->kind == LT_STORAGE_EXTERNAL || need > out->storage->nbytes - (size_t)out->offset * lt_dtype_size((lt_dtype)out->dtype) ||
      atomic_load(&out->storage->refcount) > 1) {
    if (atomic_load(&out->storage->refcount) > 1 && out->numel > 0 && need > 0 && !lt_out_resize_detaches) {
      char b1[128], b2[128];
      return lt_error("%s: out= tensor of shape %s is a view shared with other tensors and cannot be resized to %s",
                      op, lt_shape_str(out->ndim, out->sizes, b1, sizeof b1), lt_shape_str(ndim, sizes, b2, sizeof b2));
    }
    lt_storage *s = lt_storage_new(lt_tensor_device(out), need);
    if (!s) return -1;
    lt_storage_release(out->storage);
    out->storage = s;
    out->offset = 0;
  }
  out->ndim = (int8_t)ndim;
  if (ndim > 0) memcpy(out->sizes, sizes, sizeof(int64_t) * ndim);
  lt_contiguous_strides(ndim, sizes, out->strides);
  out->numel = numel;
  return 0;
}

lt_tensor_list lt_tensor_list_new(int n) {
  lt_tensor_list l;
  l.v = calloc(n > 0 ? (size_t)n : 1, sizeof(lt_tensor *));
  l.n = l.v ? n : -1;
  if (!l.v) lt_error("out of memory allocating a tensor list");
  return l;
}

void lt_tensor_list_release(lt_tensor_list l) {
  if (l.n < 0 || !l.v) return;
  for (int i = 0; i < l.n; i++) lt_tensor_release(l.v[i]);
  free(l.v);
}
