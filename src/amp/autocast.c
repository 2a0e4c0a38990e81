/*
** autocast.c — the Autocast key's thread-local state, its cast cache and the
** casts the generated wrappers make (autocast.h).
*/
#include <stdlib.h>
#include <string.h>
#include "amp/autocast.h"
#include "autograd/autograd.h"
#include "core/error.h"
#include "dispatch/dispatch.h"
#include "lt_ops.h"

typedef struct ac_dev { bool enabled; lt_dtype dtype; } ac_dev;

/* PyTorch's defaults: bfloat16 on the CPU, float16 on CUDA */
static _Thread_local ac_dev state[LT_AC_NUM_DEVS] = {
  [LT_AC_DEV_CPU] = { false, LT_BFLOAT16 },
  [LT_AC_DEV_CUDA] = { false, LT_FLOAT16 },
};
static _Thread_local bool cache_on = true;
static _Thread_local int nesting = 0;

/* The cast cache: float32 leaves that require grad (weights) and their
** lower-precision copies. Both are held (so a freed tensor's address cannot
** come back as a false hit) until the outermost region ends. */
typedef struct cache_entry {
  lt_tensor *src, *cast;
  const lt_storage *storage;   /* the source's storage and version when cast: a weight */
  unsigned version;            /* changed in place, or given new data (x.data = y), is cast again */
} cache_entry;
static _Thread_local cache_entry *cache;
static _Thread_local int cache_n, cache_cap;

static void update_key(void) {
  bool any = false;
  for (int d = 0; d < LT_AC_NUM_DEVS; d++) any |= state[d].enabled;
  if (any) lt_tls_included |= LT_KEYBIT(LT_KEY_AUTOCAST);
  else lt_tls_included &= ~LT_KEYBIT(LT_KEY_AUTOCAST);
}

bool lt_autocast_enabled(int dev) { return state[dev].enabled; }
void lt_autocast_set_enabled(int dev, bool on) { state[dev].enabled = on; update_key(); }
lt_dtype lt_autocast_dtype(int dev) { return state[dev].dtype; }
void lt_autocast_set_dtype(int dev, lt_dtype dt) { state[dev].dtype = dt; }
bool lt_autocast_cache_enabled(void) { return cache_on; }
void lt_autocast_set_cache_enabled(bool on) { cache_on = on; }
int lt_autocast_enter(void) { return ++nesting; }
int lt_autocast_exit(void) {
  if (nesting > 0) nesting--;
  if (nesting == 0) lt_autocast_clear_cache();
  return nesting;
}

void lt_autocast_clear_cache(void) {
  for (int i = 0; i < cache_n; i++) {
    lt_tensor_release(cache[i].src);
    lt_tensor_release(cache[i].cast);
  }
  free(cache);
  cache = NULL;
  cache_n = cache_cap = 0;
}

int lt_autocast_cache_size(void) { return cache_n; }

static unsigned version_of(const lt_tensor *t) {
  return atomic_load_explicit(&t->storage->version, memory_order_relaxed);
}

/* a leaf weight as PyTorch's heuristic sees it: float32, requires grad, no history, not a view */
static bool cacheable(const lt_autocast_ctx *c, const lt_tensor *t) {
  return cache_on && c->policy == LT_AC_LOWER && t->dtype == LT_FLOAT32 && t->requires_grad &&
         t->grad_fn == NULL && !(t->autograd && t->autograd->view_base) && lt_grad_enabled();
}

static int device_of_keys(lt_keyset bk) {
  if (bk & LT_KEYBIT(LT_KEY_CUDA)) return LT_AC_DEV_CUDA;
  if (bk & LT_KEYBIT(LT_KEY_CPU)) return LT_AC_DEV_CPU;
  return -1;   /* meta: shapes only, nothing to gain */
}

int lt_autocast_policy(lt_autocast_ctx *c, lt_keyset bk, int pol_cpu, int pol_cuda) {
  memset(c, 0, sizeof *c);
  int dev = device_of_keys(bk);
  if (dev < 0 || !state[dev].enabled) return LT_AC_NONE;
  int pol = dev == LT_AC_DEV_CUDA ? pol_cuda : pol_cpu;
  if (pol == LT_AC_NONE) return pol;
  c->dev = dev;
  c->policy = pol;
  c->to = pol == LT_AC_LOWER || pol == LT_AC_PROMOTE ? state[dev].dtype : LT_FLOAT32;
  return pol;
}

bool lt_autocast_eligible(const lt_autocast_ctx *c, const lt_tensor *t) {
  if (!t || t->is_wrapped_number) return false;
  if (t->dtype != LT_FLOAT32 && t->dtype != LT_FLOAT16 && t->dtype != LT_BFLOAT16) return false;
  return device_of_keys(t->keys & LT_BACKEND_KEYS) == c->dev;
}

void lt_autocast_promote(lt_autocast_ctx *c, const char *op, const lt_tensor *t) {
  if (c->failed || !lt_autocast_eligible(c, t)) return;
  lt_dtype low = state[c->dev].dtype;
  if (c->to == LT_FLOAT32 || t->dtype == LT_FLOAT32) c->to = LT_FLOAT32;
  else if (t->dtype != low) {
    /* float16 beside a bfloat16 autocast (or the reverse): PyTorch refuses it too */
    lt_error("%s: autocast cannot promote %s together with %s (the autocast dtype)", op,
             lt_dtype_name((lt_dtype)t->dtype), lt_dtype_name(low));
    c->failed = true;
  }
}

static bool hold(lt_autocast_ctx *c, lt_tensor *t) {
  if (c->n < (int)(sizeof c->made / sizeof c->made[0])) { c->made[c->n++] = t; return true; }
  int k = c->n - (int)(sizeof c->made / sizeof c->made[0]);
  if (k >= c->cap) {
    int cap = c->cap ? 2 * c->cap : 16;
    lt_tensor **m = realloc(c->more, (size_t)cap * sizeof *m);
    if (!m) { lt_tensor_release(t); lt_error("autocast: out of memory"); c->failed = true; return false; }
    c->more = m;
    c->cap = cap;
  }
  c->more[k] = t;
  c->n++;
  return true;
}

static lt_tensor *cached(lt_autocast_ctx *c, lt_tensor *t) {
  for (int i = 0; i < cache_n; i++) {
    if (cache[i].src != t) continue;
    if (cache[i].storage == t->storage && cache[i].version == version_of(t) && cache[i].cast->dtype == c->to) {
      lt_tensor_retain(cache[i].cast);
      return cache[i].cast;
    }
    /* changed in place since (or another autocast dtype): cast again below */
    lt_tensor_release(cache[i].src);
    lt_tensor_release(cache[i].cast);
    cache[i] = cache[--cache_n];
    break;
  }
  lt_tensor *r = lt__to_copy(t, c->to);
  if (!r) return NULL;
  if (cache_n == cache_cap) {
    int cap = cache_cap ? 2 * cache_cap : 16;
    cache_entry *m = realloc(cache, (size_t)cap * sizeof *m);
    if (!m) return r;   /* not cached: still a correct cast */
    cache = m;
    cache_cap = cap;
  }
  lt_tensor_retain(t);
  lt_tensor_retain(r);
  cache[cache_n++] = (cache_entry){ t, r, t->storage, version_of(t) };
  return r;
}

lt_tensor *lt_autocast_cast(lt_autocast_ctx *c, lt_tensor *t) {
  if (!t || c->failed) return t;
  lt_tensor *r;
  if (lt_autocast_eligible(c, t) && t->dtype != c->to) {
    r = cacheable(c, t) ? cached(c, t) : lt__to_copy(t, c->to);
    if (!r) { c->failed = true; return NULL; }
  } else {
    lt_tensor_retain(t);
    r = t;
  }
  return hold(c, r) ? r : NULL;
}

lt_tensor *const *lt_autocast_cast_list(lt_autocast_ctx *c, lt_tensor *const *ts, int n) {
  if (c->failed) return ts;
  lt_tensor ***lists = realloc(c->lists, (size_t)(c->nlists + 1) * sizeof *lists);
  lt_tensor **v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  if (lists) c->lists = lists;
  if (!lists || !v) {
    free(v);
    lt_error("autocast: out of memory");
    c->failed = true;
    return ts;
  }
  c->lists[c->nlists++] = v;
  for (int i = 0; i < n; i++) {
    v[i] = lt_autocast_cast(c, ts[i]);
    if (c->failed) return ts;
  }
  return v;
}

void lt_autocast_begin_call(lt_autocast_ctx *c) {
  c->saved_excluded = lt_tls_excluded;
  c->began = true;
  lt_tls_excluded |= LT_KEYBIT(LT_KEY_AUTOCAST);
}

void lt_autocast_end(lt_autocast_ctx *c) {
  if (c->began) lt_tls_excluded = c->saved_excluded;
  c->began = false;
  int fixed = (int)(sizeof c->made / sizeof c->made[0]);
  for (int i = 0; i < c->n; i++) lt_tensor_release(i < fixed ? c->made[i] : c->more[i - fixed]);
  free(c->more);
  for (int i = 0; i < c->nlists; i++) free(c->lists[i]);
  free(c->lists);
  c->n = c->nlists = 0;
  c->more = NULL;
  c->lists = NULL;
}

int lt_autocast_banned(const char *op) {
  return lt_error("%s: unsafe to autocast: many models apply a sigmoid just before it, and its "
                  "result loses precision in float16; use binary_cross_entropy_with_logits "
                  "(nn.BCEWithLogitsLoss), which is safe under autocast", op);
}
