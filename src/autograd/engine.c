/*
** engine.c — runs a graph backwards: counts each node's incoming edges, then
** runs nodes whose gradients are complete, latest-created first, summing the
** gradients that arrive on the same input. No recursion anywhere: a chain of
** a million nodes needs no more C stack than a chain of one.
**
** The engine runs on the calling thread. Device nodes would get a queue and a
** worker thread of their own (the ready heap below is per backward call, so a
** second queue per device slots in beside it).
*/
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "autograd.h"
#include "core/backend.h"
#include "lt_ops.h"

bool lt_node_is_accumulator(const lt_node *n);

static atomic_uint epoch_counter;

void (*lt_autograd_node_hook)(const lt_node *n, int phase) = NULL;

/* ---- a growable array of nodes ---- */
typedef struct node_vec { lt_node **v; size_t n, cap; } node_vec;

static int vec_push(node_vec *a, lt_node *x);
/* the discovered nodes are held for the whole run: releasing saved tensors
** mid-run may otherwise free a node that is still listed */
static int seen_push(node_vec *a, lt_node *x) {
  if (vec_push(a, x) < 0) return -1;
  lt_node_retain(x);
  return 0;
}

static int vec_push(node_vec *a, lt_node *x) {
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 64;
    lt_node **v = realloc(a->v, cap * sizeof *v);
    if (!v) return lt_error("backward: out of memory");
    a->v = v; a->cap = cap;
  }
  a->v[a->n++] = x;
  return 0;
}

/* ---- ready heap: leaves' AccumulateGrad first, then highest seq first ----
** A leaf's AccumulateGrad is made once and kept, so its seq dates from the first
** backward: by seq alone it would wait behind every node of a later graph, and
** post-accumulate-grad hooks (DDP's buckets, FSDP's reduce-scatters) would all fire
** at the end of backward instead of while it runs. Ready, it runs at once. */
static uint64_t priority(const lt_node *n) { return lt_node_is_accumulator(n) ? UINT64_MAX : n->seq; }

static void heap_push(node_vec *h, lt_node *x) {
  size_t i = h->n - 1;
  h->v[i] = x;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (priority(h->v[p]) >= priority(h->v[i])) break;
    lt_node *t = h->v[p]; h->v[p] = h->v[i]; h->v[i] = t;
    i = p;
  }
}

static lt_node *heap_pop(node_vec *h) {
  lt_node *top = h->v[0];
  h->v[0] = h->v[--h->n];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && priority(h->v[l]) > priority(h->v[m])) m = l;
    if (r < h->n && priority(h->v[r]) > priority(h->v[m])) m = r;
    if (m == i) break;
    lt_node *t = h->v[m]; h->v[m] = h->v[i]; h->v[i] = t;
    i = m;
  }
  return top;
}

static int ready_push(node_vec *h, lt_node *x) {
  if (vec_push(h, x) < 0) return -1;
  heap_push(h, x);
  return 0;
}

/* add g into slot k of n's input buffer (takes ownership of g) */
static int buffer_add(lt_node *n, uint32_t k, lt_tensor *g) {
  if (!n->buffer) {
    n->buffer = calloc((size_t)(n->num_outputs > 0 ? n->num_outputs : 1), sizeof(lt_tensor *));
    if (!n->buffer) { lt_tensor_release(g); return lt_error("backward: out of memory"); }
  }
  if (!n->buffer[k]) { n->buffer[k] = g; return 0; }
  lt_tensor *s = lt_add(n->buffer[k], g, lt_scalar_int(1));
  lt_tensor_release(g);
  if (!s) return -1;
  lt_tensor_release(n->buffer[k]);
  n->buffer[k] = s;
  return 0;
}

/* anomaly mode's scan, on a host copy when the gradient lives on a device
** (a failed copy leaves its error and counts as no NaN: the scan is advisory) */
static bool has_nan(lt_tensor *t) {
  if (!lt_dtype_is_float((lt_dtype)t->dtype)) return false;
  lt_tensor *h = lt_tensor_to_host(t);
  if (!h) return false;
  bool found = false;
  for (int64_t i = 0; i < h->numel && !found; i++) {
    double v = lt_tensor_get_double(h, i);
    found = v != v;
  }
  lt_tensor_release(h);
  return found;
}

static int run_hooks(lt_node *n, lt_tensor **grads) {
  for (lt_grad_hook *h = n->pre_hooks; h; h = h->next) {
    int k = h->slot;
    if (k < 0 || k >= n->num_outputs || !grads[k]) continue;
    lt_tensor *rep = NULL;
    if (h->fn(h, grads[k], &rep) < 0) return -1;
    if (rep) { lt_tensor_release(grads[k]); grads[k] = rep; }
  }
  return 0;
}

/* callbacks queued during the backward running on this thread (one list per
** lt_run_backward call, so a reentrant backward keeps its own) */
static _Thread_local lt_grad_hook *final_callbacks;
static _Thread_local int backward_depth;

int lt_autograd_queue_callback(lt_grad_hook *h) {
  if (backward_depth == 0) {
    if (h->free) h->free(h);
    return lt_error("queue_callback: no backward is running on this thread");
  }
  h->next = NULL;
  lt_grad_hook **p = &final_callbacks;
  while (*p) p = &(*p)->next;
  *p = h;
  return 0;
}

/* run (rc 0) or drop the queued callbacks, in queue order; callbacks may queue more */
static int run_final_callbacks(int rc) {
  while (final_callbacks) {
    lt_grad_hook *h = final_callbacks;
    final_callbacks = h->next;
    if (rc == 0 && h->fn(h, NULL, NULL) < 0) rc = -1;
    if (h->free) h->free(h);
  }
  return rc;
}

/* where the gradient of input i should be captured: (node, slot) */
typedef struct capture { lt_node *fn; uint32_t slot; } capture;

static int run_backward(lt_tensor *const *roots, lt_tensor *const *grads, int n,
                        const lt_backward_opts *opts, lt_tensor **results);

int lt_run_backward(lt_tensor *const *roots, lt_tensor *const *grads, int n,
                    const lt_backward_opts *opts, lt_tensor **results) {
  lt_grad_hook *outer = final_callbacks;
  final_callbacks = NULL;
  backward_depth++;
  int rc = run_backward(roots, grads, n, opts, results);
  /* callbacks run with grad mode as the caller had it, after every node ran */
  rc = run_final_callbacks(rc);
  backward_depth--;
  final_callbacks = outer;
  return rc;
}

static int run_backward(lt_tensor *const *roots, lt_tensor *const *grads, int n,
                        const lt_backward_opts *opts, lt_tensor **results) {
  node_vec seen = {0}, ready = {0};
  capture *caps = NULL;
  lt_tensor **grads_out = NULL;
  int grads_n = 0;   /* entries of grads_out that done: releases (those not yet handed on) */
  int rc = -1;
  bool saved_mode = lt_tls_grad_enabled;
  lt_keyset saved_excluded = lt_tls_excluded;
  const char *who = opts->accumulate ? "backward" : "grad";
  uint32_t epoch = atomic_fetch_add(&epoch_counter, 1) + 1;
  if (epoch == 0) epoch = atomic_fetch_add(&epoch_counter, 1) + 1;

  for (int i = 0; i < n; i++) {
    lt_tensor *r = roots[i];
    if (!r->requires_grad) {
      lt_error("%s: element %d of tensors does not require grad and does not have a grad_fn", who, i + 1);
      goto done;
    }
    if (!grads[i] && r->numel != 1) {
      char b[128];
      lt_error("%s: grad can be implicitly created only for scalar outputs (got shape %s); pass a gradient", who,
               lt_shape_str(r->ndim, r->sizes, b, sizeof b));
      goto done;
    }
    if (grads[i] && !lt_tensor_same_shape(grads[i], r)) {
      char b1[128], b2[128];
      lt_error("%s: mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a shape of %s", who,
               i + 1, lt_shape_str(grads[i]->ndim, grads[i]->sizes, b1, sizeof b1), i + 1,
               lt_shape_str(r->ndim, r->sizes, b2, sizeof b2));
      goto done;
    }
  }

  /* 1. discover the graph and count each node's incoming edges */
  for (int i = 0; i < n; i++) {
    lt_edge e = lt_gradient_edge(roots[i]);
    if (!e.fn) { lt_error("backward: tensor %d has no gradient edge", i + 1); goto done; }
    if (e.fn->epoch != epoch) {
      e.fn->epoch = epoch;
      e.fn->dependencies = 0;
      if (seen_push(&seen, e.fn) < 0) goto done;
    }
  }
  for (size_t s = 0; s < seen.n; s++) {
    lt_node *x = seen.v[s];
    for (int j = 0; j < x->num_next; j++) {
      lt_node *c = x->next[j].fn;
      if (!c) continue;
      if (c->epoch != epoch) {
        c->epoch = epoch;
        c->dependencies = 0;
        if (seen_push(&seen, c) < 0) goto done;
      }
      c->dependencies++;
    }
  }

  /* where to capture the gradients of the requested inputs */
  if (opts->num_inputs > 0) {
    caps = calloc((size_t)opts->num_inputs, sizeof(capture));
    if (!caps) { lt_error("backward: out of memory"); goto done; }
    for (int i = 0; i < opts->num_inputs; i++) {
      lt_tensor *t = opts->inputs[i];
      if (!t->requires_grad) {
        lt_error("%s: input %d does not require grad", opts->accumulate ? "backward" : "grad", i + 1);
        goto done;
      }
      lt_edge e = lt_gradient_edge(t);
      caps[i].fn = e.fn;
      caps[i].slot = e.input_nr;
      if (results) results[i] = NULL;
    }
  }

  /* 2. seed the roots */
  for (int i = 0; i < n; i++) {
    lt_edge e = lt_gradient_edge(roots[i]);
    lt_tensor *g;
    if (grads[i]) { lt_tensor_retain(grads[i]); g = grads[i]; }
    else {
      g = lt_tensor_new(lt_tensor_dtype(roots[i]), lt_tensor_device(roots[i]), roots[i]->ndim, roots[i]->sizes);
      if (!g || lt_tensor_fill_(g, lt_scalar_int(1)) < 0) { lt_tensor_release(g); goto done; }
    }
    if (buffer_add(e.fn, e.input_nr, g) < 0) goto done;
  }
  for (size_t s = 0; s < seen.n; s++)
    if (seen.v[s]->dependencies == 0 && ready_push(&ready, seen.v[s]) < 0) goto done;

  lt_tls_grad_enabled = opts->create_graph;
  /* The derivatives run in the dtypes the forward chose: a backward called
  ** inside torch.autocast must not cast them again (the casts' own nodes
  ** already bring each gradient back to its leaf's dtype). */
  lt_tls_excluded |= LT_KEYBIT(LT_KEY_AUTOCAST);

  /* 3. run */
  while (ready.n > 0) {
    lt_node *x = heap_pop(&ready);
    lt_tensor **in = x->buffer;
    lt_tensor *none[1] = {NULL};
    if (!in) in = none;   /* nothing arrived: every incoming grad is zero */
    if (run_hooks(x, in) < 0) goto done;
    bool skip = false;
    if (caps) {
      bool captured = false;
      for (int i = 0; i < opts->num_inputs; i++) {
        if (caps[i].fn != x) continue;
        captured = true;
        if (!opts->accumulate && results && in[caps[i].slot]) {
          lt_tensor *g = in[caps[i].slot];
          lt_tensor_retain(g);
          lt_tensor_release(results[i]);
          results[i] = g;
        }
      }
      /* backward(inputs=...) accumulates only into those; grad() into none */
      if (lt_node_is_accumulator(x) && (!opts->accumulate || !captured)) skip = true;
    } else if (!opts->accumulate && lt_node_is_accumulator(x)) {
      skip = true;
    }
    if (!skip) {
      /* a node run again after its saved tensors were freed fails when it unpacks them */
      free(grads_out);
      grads_n = 0;
      grads_out = calloc((size_t)(x->num_next > 0 ? x->num_next : 1), sizeof(lt_tensor *));
      if (!grads_out) { lt_error("backward: out of memory"); goto done; }
      grads_n = x->num_next;
      if (lt_autograd_node_hook) lt_autograd_node_hook(x, 0);
      int applied = x->ops->apply(x, in, grads_out);
      if (lt_autograd_node_hook) lt_autograd_node_hook(x, 1);
      if (applied < 0) {
        goto done;   /* done: releases what apply made before it failed */
      }
      if (lt_anomaly_enabled) {
        for (int j = 0; j < x->num_next; j++) {
          if (grads_out[j] && has_nan(grads_out[j])) {
            lt_error("Function '%s' returned nan values in its %dth output.%s%s", x->ops->name, j + 1,
                     x->anomaly_trace ? "\nTraceback of forward call that caused the error:\n" : "",
                     x->anomaly_trace ? x->anomaly_trace : "");
            goto done;
          }
        }
      }
      if (!opts->retain_graph && x->ops->release_saved) {
        x->ops->release_saved(x);
        x->saved_released = true;
      }
    }
    if (x->buffer) {
      for (int k = 0; k < x->num_outputs; k++) { lt_tensor_release(x->buffer[k]); x->buffer[k] = NULL; }
    }
    for (int j = 0; j < x->num_next; j++) {
      lt_node *c = x->next[j].fn;
      lt_tensor *g = skip ? NULL : grads_out[j];
      if (!skip) grads_out[j] = NULL;
      if (!c) { lt_tensor_release(g); continue; }
      if (g && buffer_add(c, x->next[j].input_nr, g) < 0) goto done;
      if (--c->dependencies == 0 && ready_push(&ready, c) < 0) goto done;
    }
  }

  if (caps && !opts->accumulate && results) {
    for (int i = 0; i < opts->num_inputs; i++) {
      if (!results[i] && !opts->allow_unused) {
        lt_error("grad: one of the differentiated tensors (input %d) appears to not have been used in the graph. "
                 "Set allow_unused=true if this is the desired behavior.", i + 1);
        goto done;
      }
    }
  }
  rc = 0;

done:
  lt_tls_grad_enabled = saved_mode;
  lt_tls_excluded = saved_excluded;
  for (size_t s = 0; s < seen.n; s++) {
    lt_node *x = seen.v[s];
    if (x->buffer) {
      for (int k = 0; k < x->num_outputs; k++) lt_tensor_release(x->buffer[k]);
      free(x->buffer);
      x->buffer = NULL;
    }
  }
  for (size_t s = 0; s < seen.n; s++) lt_node_release(seen.v[s]);
  if (rc < 0 && results && opts->num_inputs > 0 && !opts->accumulate) {
    for (int i = 0; i < opts->num_inputs; i++) { lt_tensor_release(results[i]); results[i] = NULL; }
  }
  /* a failure while the gradients of a node were handed on (buffer_add, ready_push)
  ** leaves the rest of them here */
  for (int j = 0; j < grads_n; j++) lt_tensor_release(grads_out[j]);
  free(grads_out);
  free(caps);
  free(seen.v);
  free(ready.v);
  return rc;
}

int lt_backward(lt_tensor *root, lt_tensor *grad, bool retain_graph, bool create_graph) {
  lt_backward_opts o = {0};
  o.retain_graph = retain_graph || create_graph;
  o.create_graph = create_graph;
  o.accumulate = true;
  lt_tensor *const roots[1] = {root};
  lt_tensor *const grads[1] = {grad};
  return lt_run_backward(roots, grads, 1, &o, NULL);
}
