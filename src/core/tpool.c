/*
** tpool.c — the pool of temporaries of tpool.h.
*/
#include "core/tpool.h"
#include "core/error.h"

lt_tensor *lt_tpool_keep(lt_tpool *p, lt_tensor *t) {
  if (!t) { p->failed = true; return NULL; }
  if (p->n == LT_TPOOL_MAX) {   /* the users are short sequences: a bug, not an input */
    lt_tensor_release(t);
    p->failed = true;
    return lt_error_null("internal: more than %d temporaries in one op or derivative", LT_TPOOL_MAX);
  }
  p->t[p->n++] = t;
  return t;
}

void lt_tpool_drop(lt_tpool *p) {
  for (int i = 0; i < p->n; i++) lt_tensor_release(p->t[i]);
  p->n = 0;
}

lt_tensor *lt_tpool_finish(lt_tpool *p, lt_tensor *r) {
  if (r && !p->failed) lt_tensor_retain(r);
  else r = NULL;
  lt_tpool_drop(p);
  return r;
}

lt_tensor *lt_tpool_give(lt_tpool *p, lt_tensor *r) {
  if (r) lt_tensor_retain(r);
  lt_tpool_drop(p);
  return r;
}
