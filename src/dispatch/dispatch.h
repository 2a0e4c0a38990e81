/*
** dispatch.h — the op registry and dispatcher.
**
** Every op is declared once in a file of src/ops; the build generates from those
** declarations the op table (lt_op_table), the C entry points (lt_add,
** lt_add_out, lt_add_, ... in build/gen/lt_ops.h), a Profile wrapper per op,
** the Lua bindings and the op reference.
**
** Backends fill their key's column from a generated table
** (lt_dispatch_register_backend); the generated lt_op_table itself holds only
** the Autograd and Profile kernels.
**
** A call computes the keyset of its tensor arguments, adds the thread-local
** included keys, removes the excluded ones, and runs the kernel of the highest
** key that has one (a NULL kernel is a fallthrough). Backend kernels (CPU,
** CUDA) take the op's arguments; wrapper kernels (Autograd, Autocast,
** Profile) also take the keyset below themselves, to redispatch with.
*/
#ifndef LT_DISPATCH_H
#define LT_DISPATCH_H

#include "core/tensor.h"

enum {
  LT_OPF_INPLACE = 1,     /* mutates its first argument */
  LT_OPF_VIEW = 2,        /* result aliases its first argument */
  LT_OPF_OUT = 4,         /* has an out= form (the kernel takes `out`, NULL if absent) */
  LT_OPF_COMPOSITE = 8,   /* implemented with other ops; not dispatched itself */
  LT_OPF_NONDIFF = 16,    /* no derivative (integer results, comparisons, ...) */
  LT_OPF_COMPLEX = 32,    /* its kernels take complex tensors (`complex = true`) */
  LT_OPF_COMPLEX_ANY = 64,/* ... on every backend: one device-neutral kernel (views, copies) */
  LT_OPF_CUSTOM = 128,    /* defined at run time (registry.h): its kernels are boxed */
};

typedef struct lt_op_entry {
  const char *name;               /* "add" */
  const char *schema;             /* "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" */
  const char *doc;
  unsigned flags;
  void *kernel[LT_NUM_KEYS];      /* NULL = fall through */
} lt_op_entry;

extern lt_op_entry lt_op_table[];
extern const int lt_num_ops;
/* The table has room after the generated ops for ops defined at run time
** (torch.library, C extensions: dispatch/registry.h), so op ids run from 0 to
** lt_dispatch_max_ops() - 1; a slot not defined yet has a NULL name. */
#define LT_MAX_CUSTOM_OPS 1024
static inline int lt_dispatch_max_ops(void) { return lt_num_ops + LT_MAX_CUSTOM_OPS; }

/* thread-local include/exclude sets */
extern _Thread_local lt_keyset lt_tls_included;
extern _Thread_local lt_keyset lt_tls_excluded;

static inline lt_keyset lt_dispatch_keys(lt_keyset ks) {
  /* only Lua numbers (host 0-d tensors without a backend key) in the call: the CPU runs it */
  if (!(ks & LT_BACKEND_KEYS)) ks |= LT_KEYBIT(LT_KEY_CPU);
  return (ks | lt_tls_included) & ~lt_tls_excluded;
}
/* every key strictly below k */
static inline lt_keyset lt_keyset_below(int k) { return LT_KEYBIT(k) - 1u; }

/* highest key in ks with a kernel for the op; -1 if none */
static inline int lt_dispatch_select(const lt_op_entry *e, lt_keyset ks) {
  while (ks) {
    int k = 31 - __builtin_clz(ks);
    if (e->kernel[k]) return k;
    ks &= ~LT_KEYBIT(k);
  }
  return -1;
}

/* the error for a call that found no kernel; returns -1 */
int lt_dispatch_no_kernel(int op, lt_keyset ks);
/* tensors on different backends in one call; returns -1 */
int lt_dispatch_device_mismatch(int op, lt_keyset ks);
/* Tensors on two devices of one backend (cuda:0 and cuda:1) in one call: *dev
** is the index seen so far (-1: none yet), updated from ts[0..n-1]; NULLs,
** wrapped numbers and CPU tensors are skipped. 0, or -1 with the error set. */
int lt_dispatch_same_device(int op, int *dev, const lt_tensor *const *ts, int n);
static inline bool lt_keyset_mixed_backends(lt_keyset ks) {
  lt_keyset b = ks & LT_BACKEND_KEYS;
  return b & (b - 1);
}

/* The complex guard of the generated entry points: a call with a complex
** tensor or dtype= argument goes on only for an op whose flags say its
** kernels take complex (on a backend other than the CPU, only one whose
** kernel is the device-neutral one). 0 to go on, or -1 with the error
** "OP: complex64 is not supported" (or the CUDA backend's "not yet"). */
#define LT_IS_COMPLEX_DT(d) ((int)(d) >= (int)LT_COMPLEX64)
#define LT_IS_COMPLEX_T(t) LT_IS_COMPLEX_DT((t)->dtype)
bool lt_tensors_any_complex(lt_tensor *const *ts, int n);
int lt_tensors_complex_dtype(lt_tensor *const *ts, int n);   /* the first complex one's, or -1 */
int lt_dispatch_complex_refused(int op, lt_keyset ks, int complex_dtype);

/* A required tensor argument is NULL: the caller's earlier step failed and
** set the error, which stands; without one, says which op got the NULL. */
void lt_dispatch_null_arg(int op);

/* Start the library: register the built-in backends (CPU). Idempotent and
** thread-safe; the torch module and lutorch_open call it, C programs using
** the core directly call it first. */
void lt_init(void);

/* look up an op by name; -1 if unknown */
int lt_dispatch_find(const char *name);
/* register (or replace) a kernel at a key; fn NULL makes the key fall through */
int lt_dispatch_register(int op, lt_dispatch_key key, void *fn);
/* a backend's kernels at its key (LT_KEY_CPU, LT_KEY_CUDA): table has one entry per
** op (LT_NUM_OPS, indexed by LT_OP_*, generated as lt_B_kernel_table in
** build/gen/kernels_B.c); each non-NULL entry replaces the op's kernel at key,
** NULL entries leave it as it is. 0, or -1 with an error for a key that is not a
** backend's or a NULL table. */
int lt_dispatch_register_backend(lt_dispatch_key key, void *const *table);

/* Profiling: while a hook is set, the Profile key is in the included set of
** the thread that set it (only that one: the pool's threads run kernels'
** loops, not entry points), and the hook sees every op call it makes: dispatched ops through
** their Profile wrappers, composite ops from their entry points. Phase 0
** (enter) passes the op's tensor arguments (NULL entries for absent optional
** ones; Tensor[] lists are not passed), phase 1 (exit) none. */
typedef void (*lt_dispatch_hook_fn)(void *ud, int op, int phase, const lt_tensor *const *in, int n);
void lt_dispatch_set_hook(lt_dispatch_hook_fn fn, void *ud);         /* NULL removes it */
void lt_dispatch_call_hook(int op, int phase, const lt_tensor *const *in, int n);
extern lt_dispatch_hook_fn lt_dispatch_hook;

#endif
