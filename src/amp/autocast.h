/*
** autocast.h — automatic mixed precision: the Autocast dispatch key's state and
** the casts its wrappers make.
**
** torch.autocast(device_type, {dtype}) turns a device type's autocast on for
** the calling thread; while one is on, the Autocast key is in the thread's
** included set. The ops named in src/ops/autocast.lua get a generated wrapper
** at that key (tools/gen_autocast.lua); it asks lt_autocast_policy for the
** op's policy on the call's device, casts the floating-point tensor arguments
** through an lt_autocast_ctx, and runs the op again below Autocast with
** Autocast excluded, so the ops inside it (a composite's steps, a loss's
** log_softmax) are not cast a second time. Every other op falls through.
**
** The casts are ordinary differentiable conversions (_to_copy), made above
** Autograd, so the graph records them and gradients reach float32 leaves in
** float32. A float32 leaf that requires grad (a model's weight) is cast once
** per outermost autocast region: the cache holds its lower-precision copy
** until the region ends (or the leaf is changed in place: its version is
** checked on every hit).
*/
#ifndef LT_AUTOCAST_H
#define LT_AUTOCAST_H

#include "core/tensor.h"

/* the cast policies (PyTorch's names) */
enum {
  LT_AC_NONE = 0,
  LT_AC_LOWER,          /* lower_precision_fp: floating arguments to the autocast dtype */
  LT_AC_FP32,           /* fp32: floating arguments to float32 */
  LT_AC_FP32_OPT_DTYPE, /* fp32_set_opt_dtype: dtype=float32 unless given (arguments untouched) */
  LT_AC_PROMOTE,        /* promote: floating arguments to the widest among them */
  LT_AC_BANNED,         /* an error: the op is unsafe under autocast */
  LT_AC_KEEP,           /* no casts, and none inside: a composite PyTorch runs as one kernel */
};

/* the device types autocast knows (index of the state arrays) */
enum { LT_AC_DEV_CPU = 0, LT_AC_DEV_CUDA = 1, LT_AC_NUM_DEVS = 2 };

/* Thread-local state, read and changed through these. Enabling any device
** type puts the Autocast key in the thread's included set. */
bool lt_autocast_enabled(int dev);
void lt_autocast_set_enabled(int dev, bool on);
lt_dtype lt_autocast_dtype(int dev);
void lt_autocast_set_dtype(int dev, lt_dtype dt);
bool lt_autocast_cache_enabled(void);
void lt_autocast_set_cache_enabled(bool on);
/* nesting of the torch.autocast regions; leaving the outermost clears the cache */
int lt_autocast_enter(void);
int lt_autocast_exit(void);
void lt_autocast_clear_cache(void);
/* the number of cached casts (tests) */
int lt_autocast_cache_size(void);

/* Whether the Autocast key is on for this call (included and not excluded). */
static inline bool lt_autocast_active(lt_keyset included, lt_keyset excluded) {
  return ((included & ~excluded) & LT_KEYBIT(LT_KEY_AUTOCAST)) != 0;
}

/* One wrapper call's casts. */
typedef struct lt_autocast_ctx {
  int dev;                 /* LT_AC_DEV_* of the call */
  int policy;
  lt_dtype to;             /* the dtype eligible arguments become */
  bool failed;             /* a cast failed (the error is set) */
  lt_tensor *made[8];      /* references this call holds: released by lt_autocast_end */
  lt_tensor **more;
  int n, cap;
  lt_tensor ***lists;      /* cast Tensor[] arrays, freed at the end */
  int nlists;
  lt_keyset saved_excluded;  /* the thread's excluded set before lt_autocast_begin_call */
  bool began;
} lt_autocast_ctx;

/*
** The policy of an op on the device of a call whose tensors have the backend
** keys `bk`: pol_cpu / pol_cuda (LT_AC_*) when that device type's autocast is
** enabled, else LT_AC_NONE. Fills ctx (to: the lower dtype, or float32) for a
** policy other than none.
*/
int lt_autocast_policy(lt_autocast_ctx *c, lt_keyset bk, int pol_cpu, int pol_cuda);
/* promote: widen c->to by one argument (NULL and ineligible ones are skipped);
** an unexpected mix is an error naming op (c->failed). */
void lt_autocast_promote(lt_autocast_ctx *c, const char *op, const lt_tensor *t);
/* whether t would be cast on this call's device: floating, not float64, not a
** wrapped number, on the device type of the call */
bool lt_autocast_eligible(const lt_autocast_ctx *c, const lt_tensor *t);
/* t converted to c->to when eligible (cached for float32 leaf weights), else t;
** the ctx holds the reference. NULL stays NULL; a failure sets c->failed. */
lt_tensor *lt_autocast_cast(lt_autocast_ctx *c, lt_tensor *t);
/* the same for every element of a list: an array the ctx frees */
lt_tensor *const *lt_autocast_cast_list(lt_autocast_ctx *c, lt_tensor *const *ts, int n);
/* Autocast excluded on this thread while the op runs on the cast arguments */
void lt_autocast_begin_call(lt_autocast_ctx *c);
/* restores the excluded set and releases what the ctx holds */
void lt_autocast_end(lt_autocast_ctx *c);
/* the error of a banned op (LT_AC_BANNED); returns -1 */
int lt_autocast_banned(const char *op);

/* The policies of src/ops/autocast.lua, generated into lt_ops.c (ends with a
** NULL name): each op's C and Lua names and its policy per device type;
** `functional` marks the nn.functional losses written in Lua, which
** lib/nn/functional.lua casts itself through torch._autocast_call. */
typedef struct lt_autocast_entry {
  const char *name, *lua;
  int cpu, cuda;
  bool functional;
} lt_autocast_entry;
extern const lt_autocast_entry lt_autocast_ops[];

#endif
