/*
** dispatch.c — registry lookups, registration, the profiling hook, and the
** errors of a failed dispatch. The tables themselves are generated.
*/
#include <string.h>
#include "dispatch.h"
#include "core/backend.h"
#include "registry.h"

_Thread_local lt_keyset lt_tls_included = 0;
_Thread_local lt_keyset lt_tls_excluded = 0;

lt_dispatch_hook_fn lt_dispatch_hook = NULL;
static void *hook_ud = NULL;

static const char *key_names[LT_NUM_KEYS] = {
  [LT_KEY_CPU] = "CPU", [LT_KEY_CUDA] = "CUDA", [LT_KEY_META] = "Meta", [LT_KEY_AUTOGRAD] = "Autograd",
  [LT_KEY_AUTOCAST] = "Autocast", [LT_KEY_PROFILE] = "Profile",
};
_Static_assert(LT_NUM_KEYS == 6, "a new dispatch key needs its name in key_names");

int lt_dispatch_find(const char *name) {
  for (int i = 0; i < lt_num_ops; i++)
    if (strcmp(lt_op_table[i].name, name) == 0) return i;
  return lt_custom_find_id(name);   /* the ops defined at run time (registry.c) */
}

int lt_dispatch_register(int op, lt_dispatch_key key, void *fn) {
  if (op < 0 || op >= lt_num_ops) return lt_error("dispatch: no op number %d", op);
  if ((int)key < 0 || key >= LT_NUM_KEYS) return lt_error("dispatch: no key number %d", (int)key);
  lt_op_table[op].kernel[key] = fn;
  return 0;
}

int lt_dispatch_register_backend(lt_dispatch_key key, void *const *table) {
  if ((int)key < 0 || key >= LT_FIRST_WRAPPER_KEY)
    return lt_error("dispatch: key number %d is not a backend's key", (int)key);
  if (!table) return lt_error("dispatch: no kernel table for %s", key_names[key]);
  for (int i = 0; i < lt_num_ops; i++)
    if (table[i]) lt_op_table[i].kernel[key] = table[i];
  return 0;
}

/* the device type of a backend key */
static int key_device(int k) { return k == LT_KEY_CUDA ? LT_DEV_CUDA : k == LT_KEY_META ? LT_DEV_META : LT_DEV_CPU; }

int lt_dispatch_no_kernel(int op, lt_keyset ks) {
  lt_keyset b = ks & LT_BACKEND_KEYS;
  int k = b ? 31 - __builtin_clz(b) : LT_KEY_CPU;
  const char *dev = lt_device_type_name(key_device(k));
  /* no kernel because the device's whole backend is missing: say that */
  if (!lt_backend_get(key_device(k)))
    return lt_error("%s: %s: backend not loaded", lt_op_table[op].name, dev);
  return lt_error("%s: not implemented for %s tensors (no kernel registered for %s)",
                  lt_op_table[op].name, dev, key_names[k]);
}

int lt_dispatch_device_mismatch(int op, lt_keyset ks) {
  /* name two of the backends in the call, the lower key first (cpu and cuda, cpu and meta) */
  lt_keyset b = ks & LT_BACKEND_KEYS;
  int lo = b ? __builtin_ctz(b) : LT_KEY_CPU, hi = b ? 31 - __builtin_clz(b) : LT_KEY_CUDA;
  return lt_error("%s: expected all tensors to be on the same device, but found tensors on %s and %s",
                  lt_op_table[op].name, lt_device_type_name(key_device(lo)), lt_device_type_name(key_device(hi)));
}

int lt_dispatch_same_device(int op, int *dev, const lt_tensor *const *ts, int n) {
  for (int i = 0; i < n; i++) {
    const lt_tensor *t = ts[i];
    if (!t || !(t->keys & LT_BACKEND_KEYS)) continue;
    lt_device d = lt_tensor_device(t);
    if (d.type == LT_DEV_CPU) continue;
    if (*dev < 0) *dev = d.index;
    else if (d.index != *dev) {
      const char *name = lt_device_type_name(d.type);
      return lt_error("%s: expected all tensors to be on the same device, but found tensors on %s:%d and %s:%d",
                      lt_op_table[op].name, name, *dev, name, d.index);
    }
  }
  return 0;
}

void lt_dispatch_null_arg(int op) {
  /* lt_error_message says "unknown error" when the slot is empty */
  if (strcmp(lt_error_message(), "unknown error") == 0) lt_error("%s: a tensor argument is missing (NULL)", lt_op_table[op].name);
}

bool lt_tensors_any_complex(lt_tensor *const *ts, int n) {
  for (int i = 0; i < n; i++)
    if (ts[i] && LT_IS_COMPLEX_T(ts[i])) return true;
  return false;
}

int lt_tensors_complex_dtype(lt_tensor *const *ts, int n) {
  for (int i = 0; i < n; i++)
    if (ts[i] && LT_IS_COMPLEX_T(ts[i])) return ts[i]->dtype;
  return -1;
}

/* Ops that order their elements: PyTorch refuses complex for them with a
** reason, and so do we (complex numbers have no order). */
static bool orders_elements(const char *name) {
  static const char *const names[] = {
    "max", "min", "amax", "amin", "aminmax", "argmax", "argmin", "maximum", "minimum", "fmax", "fmin",
    "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin",
    "clamp", "clamp_min", "clamp_max", "lt", "le", "gt", "ge", "searchsorted", "bucketize",
    "sign", "floor", "ceil", "round", "trunc", "frac", "relu", "hardtanh", "threshold", "heaviside",
    "unique", "unique_consecutive", "quantile", "nanquantile", NULL };
  size_t len = strlen(name);
  if (len > 1 && name[len - 1] == '_') len--;   /* the in-place form */
  for (int i = 0; names[i]; i++)
    if (strlen(names[i]) == len && strncmp(names[i], name, len) == 0) return true;
  return false;
}

int lt_dispatch_complex_refused(int op, lt_keyset ks, int complex_dtype) {
  const lt_op_entry *e = &lt_op_table[op];
  const char *dt = lt_dtype_name((lt_dtype)complex_dtype);
  if (!(e->flags & LT_OPF_COMPLEX)) {
    if (orders_elements(e->name))
      return lt_error("%s: %s is not supported: complex numbers have no ordering", e->name, dt);
    return lt_error("%s: %s is not supported", e->name, dt);
  }
  /* CUDA's kernels are real-only; the meta device's shape functions take any dtype */
  if ((ks & LT_KEYBIT(LT_KEY_CUDA)) && !(e->flags & LT_OPF_COMPLEX_ANY))
    return lt_error("%s: cuda: %s not supported yet", e->name, dt);
  return 0;
}

void lt_dispatch_set_hook(lt_dispatch_hook_fn fn, void *ud) {
  lt_dispatch_hook = fn;
  hook_ud = ud;
  if (fn) lt_tls_included |= LT_KEYBIT(LT_KEY_PROFILE);
  else lt_tls_included &= ~LT_KEYBIT(LT_KEY_PROFILE);
}

void lt_dispatch_call_hook(int op, int phase, const lt_tensor *const *in, int n) {
  lt_dispatch_hook_fn fn = lt_dispatch_hook;
  if (fn) fn(hook_ud, op, phase, in, n);
}
