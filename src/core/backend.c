/*
** backend.c — the backend registry, and the core's device-neutral data
** movement: copy and fill hand the loop to the tensor's backend; copies
** between devices go through host memory, staged contiguously, so a backend
** needs only byte copies to and from the host.
*/
#include <string.h>
#include "core/backend.h"

#define MAX_DEVICE_TYPES 8

static const lt_backend *backends[MAX_DEVICE_TYPES];
static const char *type_names[MAX_DEVICE_TYPES] = {"cpu", "cuda", "meta"};

const char *lt_device_type_name(int device_type) {
  if (device_type < 0 || device_type >= MAX_DEVICE_TYPES || !type_names[device_type]) return "?";
  return type_names[device_type];
}

int lt_backend_register(const lt_backend *b) {
  if (!b || b->device_type < 0 || b->device_type >= MAX_DEVICE_TYPES)
    return lt_error("backend: device type out of range");
  if (!b->allocator || !b->copy || !b->fill || !b->copy_to_host || !b->copy_from_host || !b->device_count)
    return lt_error("backend %s: allocator, copy, fill, copy_to_host, copy_from_host and device_count are required",
                    b->name ? b->name : "?");
  backends[b->device_type] = b;
  return 0;
}

const lt_backend *lt_backend_get(int device_type) {
  if (device_type < 0 || device_type >= MAX_DEVICE_TYPES) return NULL;
  return backends[device_type];
}

const lt_backend *lt_backend_of(lt_device dev) {
  const lt_backend *b = lt_backend_get(dev.type);
  if (!b) return lt_error_null("%s: backend not loaded", lt_device_type_name(dev.type));
  if (dev.type != LT_DEV_CPU) {
    int n = b->device_count();
    if (dev.index < 0 || dev.index >= n)
      return lt_error_null("%s: device %s:%d does not exist (%d device%s)", b->name, b->name, dev.index, n,
                           n == 1 ? "" : "s");
  }
  return b;
}

static const lt_backend *host_backend(void) {
  return lt_backend_of(lt_device_cpu());
}

/* a contiguous copy of t in its own dtype on its own device (t retained when already so) */
static lt_tensor *staged(const lt_tensor *t) {
  if (lt_tensor_is_contiguous(t)) {
    lt_tensor_retain((lt_tensor *)t);
    return (lt_tensor *)t;
  }
  return lt_tensor_clone_as(t, (lt_dtype)t->dtype);
}

static size_t data_offset(const lt_tensor *t) {
  return (size_t)t->offset * lt_dtype_size((lt_dtype)t->dtype);
}

static size_t data_bytes(const lt_tensor *t) {
  return (size_t)t->numel * lt_dtype_size((lt_dtype)t->dtype);
}

/* dst = src where the two live on different devices: src staged contiguously
** on its device, moved as bytes through the host, then copied (broadcast,
** converted) by dst's backend on dst's device */
static int copy_across(lt_tensor *dst, const lt_tensor *src, const lt_backend *bd, const lt_backend *bs) {
  lt_tensor *s = staged(src);
  if (!s) return -1;
  int rc = -1;
  lt_tensor *h = NULL, *d = NULL;
  if (bs->host_memory) {
    h = s; lt_tensor_retain(h);
  } else {
    h = lt_tensor_new((lt_dtype)s->dtype, lt_device_cpu(), s->ndim, s->sizes);
    if (!h || bs->copy_to_host(lt_tensor_data(h), s->storage, data_offset(s), data_bytes(s)) < 0) goto done;
  }
  if (bd->host_memory) {
    rc = bd->copy(dst, h);
  } else {
    d = lt_tensor_new((lt_dtype)h->dtype, lt_tensor_device(dst), h->ndim, h->sizes);
    if (!d || bd->copy_from_host(d->storage, 0, lt_tensor_data(h), data_bytes(h)) < 0) goto done;
    rc = bd->copy(dst, d);
  }
done:
  lt_tensor_release(d);
  lt_tensor_release(h);
  lt_tensor_release(s);
  return rc;
}

int lt_tensor_copy_(lt_tensor *dst, const lt_tensor *src) {
  lt_device dd = lt_tensor_device(dst), sd = lt_tensor_device(src);
  const lt_backend *bd = lt_backend_of(dd);
  if (!bd) return -1;
  if (lt_device_eq(dd, sd)) return bd->copy(dst, src);
  const lt_backend *bs = lt_backend_of(sd);
  if (!bs || !host_backend()) return -1;
  /* check the shapes before moving any bytes */
  int64_t st[LT_MAX_DIMS];
  if (lt_expand_strides("copy_", src, dst->ndim, dst->sizes, st) < 0) return -1;
  if (dst->numel == 0) return 0;
  return copy_across(dst, src, bd, bs);
}

int lt_tensor_fill_(lt_tensor *dst, lt_scalar v) {
  if (v.type == LT_SCALAR_COMPLEX && !lt_dtype_is_complex((lt_dtype)dst->dtype))
    return lt_error("fill_: a complex value cannot be stored in a %s tensor (its imaginary part would be lost)",
                    lt_dtype_name((lt_dtype)dst->dtype));
  const lt_backend *b = lt_backend_of(lt_tensor_device(dst));
  return b ? b->fill(dst, v) : -1;
}

lt_tensor *lt_tensor_to_host(lt_tensor *t) {
  const lt_backend *b = lt_backend_of(lt_tensor_device(t));
  if (!b) return NULL;
  if (b->host_memory) { lt_tensor_retain(t); return t; }
  lt_tensor *h = lt_tensor_new((lt_dtype)t->dtype, lt_device_cpu(), t->ndim, t->sizes);
  if (h && lt_tensor_copy_(h, t) < 0) { lt_tensor_release(h); return NULL; }
  return h;
}

bool lt_tensor_is_pinned(const lt_tensor *t) {
  if (t->storage->device.type != LT_DEV_CPU) return false;
  for (int i = 0; i < MAX_DEVICE_TYPES; i++) {
    const lt_backend *b = lt_backend_get(i);
    if (b && b->is_pinned && b->is_pinned(t->storage)) return true;
  }
  return false;
}

lt_tensor *lt_tensor_to_device_nb(lt_tensor *t, lt_device dev, bool non_blocking) {
  if (!non_blocking || lt_tensor_device(t).type != LT_DEV_CPU || dev.type == LT_DEV_CPU || !lt_tensor_is_contiguous(t))
    return lt_tensor_to_device(t, dev);
  const lt_backend *bd = lt_backend_of(dev);
  if (!bd) return NULL;
  if (!bd->copy_from_pinned_async || !bd->is_pinned || !bd->is_pinned(t->storage)) return lt_tensor_to_device(t, dev);
  lt_tensor *r = lt_tensor_new((lt_dtype)t->dtype, dev, t->ndim, t->sizes);
  if (r && t->numel > 0 &&
      bd->copy_from_pinned_async(r->storage, 0, t->storage, data_offset(t), data_bytes(t)) < 0) {
    lt_tensor_release(r);
    return NULL;
  }
  return r;
}

lt_tensor *lt_tensor_to_device(lt_tensor *t, lt_device dev) {
  if (lt_device_eq(lt_tensor_device(t), dev)) { lt_tensor_retain(t); return t; }
  lt_tensor *r = lt_tensor_new((lt_dtype)t->dtype, dev, t->ndim, t->sizes);
  if (r && lt_tensor_copy_(r, t) < 0) { lt_tensor_release(r); return NULL; }
  return r;
}
