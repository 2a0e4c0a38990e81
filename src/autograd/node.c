/*
** node.c — graph nodes, saved tensors, leaves' AccumulateGrad, and the
** per-tensor autograd state (requires_grad, detach, hooks, retain_grad).
*/
#include <stdlib.h>
#include <string.h>
#include "autograd.h"
#include "lt_ops.h"
#include "core/overlap.h"

_Thread_local bool lt_tls_grad_enabled = true;
bool lt_anomaly_enabled = false;
char *(*lt_anomaly_trace_hook)(void) = NULL;

static atomic_ullong next_seq;
static atomic_llong live_nodes;

int64_t lt_node_live_count(void) { return atomic_load(&live_nodes); }
uint64_t lt_node_seq_peek(void) { return atomic_load_explicit(&next_seq, memory_order_relaxed); }

/* one allocation per node: header, edges, input metadata and the op's context */
static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

lt_node *lt_node_new(const lt_node_ops *ops, int num_next, int num_outputs, size_t ctx_size) {
  size_t edges = align16(sizeof(lt_edge) * (size_t)num_next);
  size_t metas = align16(sizeof(lt_input_meta) * (size_t)num_next);
  size_t head = align16(sizeof(lt_node));
  char *block = calloc(1, head + edges + metas + align16(ctx_size));
  if (!block) return lt_error_null("autograd: out of memory");
  lt_node *n = (lt_node *)block;
  n->next = num_next ? (lt_edge *)(block + head) : NULL;
  n->meta = num_next ? (lt_input_meta *)(block + head + edges) : NULL;
  n->ctx = ctx_size ? block + head + edges + metas : NULL;
  atomic_init(&n->refcount, 1);
  n->ops = ops;
  n->num_next = num_next;
  n->num_outputs = num_outputs;
  n->seq = atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed);
  if (lt_anomaly_enabled && lt_anomaly_trace_hook) n->anomaly_trace = lt_anomaly_trace_hook();
  atomic_fetch_add_explicit(&live_nodes, 1, memory_order_relaxed);
  return n;
}

/* Releasing a node can release the nodes it points to, and the tensors it
** saved, whose grad_fns it may then release... A chain of a million nodes
** would recurse a million deep, so nodes whose count drops to zero while
** another is being destroyed wait in a list and are destroyed in a loop. */
static _Thread_local lt_node *pending_head = NULL;
static _Thread_local bool destroying = false;

static void destroy_node(lt_node *n) {
  if (n->ops && n->ops->release_saved && !n->saved_released) n->ops->release_saved(n);
  if (n->ops && n->ops->destroy) n->ops->destroy(n);
  for (lt_grad_hook *h = n->pre_hooks; h;) {
    lt_grad_hook *nx = h->next;
    if (h->free) h->free(h);
    h = nx;
  }
  for (int i = 0; i < n->num_next; i++)
    if (n->next[i].fn) lt_node_release(n->next[i].fn);
  if (n->leaf && n->leaf->autograd) {
    /* a dying AccumulateGrad must not stay reachable from its leaf */
    if (n->leaf->autograd->grad_accumulator == n) n->leaf->autograd->grad_accumulator = NULL;
  }
  free(n->buffer);
  free(n->anomaly_trace);
  atomic_fetch_sub_explicit(&live_nodes, 1, memory_order_relaxed);
  free(n);   /* edges, metadata and context live in the same block */
}

void lt_node_release(lt_node *n) {
  if (!n) return;
  if (atomic_fetch_sub_explicit(&n->refcount, 1, memory_order_acq_rel) != 1) return;
  if (destroying) {
    /* the dead node's seq field links the pending list: no allocation needed */
    n->seq = (uint64_t)(uintptr_t)pending_head;
    pending_head = n;
    return;
  }
  destroying = true;
  destroy_node(n);
  while (pending_head) {
    lt_node *p = pending_head;
    pending_head = (lt_node *)(uintptr_t)p->seq;
    destroy_node(p);
  }
  destroying = false;
}

/* ---- AccumulateGrad ---- */

static int accumulate_into(lt_tensor *leaf, lt_tensor *g);

static int accumulate_apply(lt_node *n, lt_tensor **grads_in, lt_tensor **grads_out) {
  (void)grads_out;
  lt_tensor *leaf = n->leaf, *g = grads_in[0];
  if (!leaf || !g) return 0;
  if (accumulate_into(leaf, g) < 0) return -1;
  for (lt_grad_hook *h = leaf->autograd ? leaf->autograd->post_acc_hooks : NULL; h; h = h->next)
    if (h->fn(h, leaf, NULL) < 0) return -1;
  return 0;
}

static int accumulate_into(lt_tensor *leaf, lt_tensor *g) {
  if (!leaf->grad) {
    if (lt_grad_enabled()) {                 /* create_graph: keep g's history */
      if (lt_internal_overlap(g) == LT_OVERLAP_NO) {
        lt_tensor_retain(g);
        leaf->grad = g;
      } else {                               /* an expanded g: a recorded copy, so
                                             ** optimizers can update the grad in place */
        leaf->grad = lt_clone(g);
        if (!leaf->grad) return -1;
      }
    } else if (!g->grad_fn && atomic_load(&g->refcount) == 1 && lt_tensor_is_contiguous(g) &&
               lt_tensor_same_shape(g, leaf) && g->dtype == leaf->dtype) {
      lt_tensor_retain(g);                   /* nobody else sees it: steal */
      leaf->grad = g;
    } else {
      leaf->grad = lt_tensor_clone_as(g, (lt_dtype)leaf->dtype);
      if (!leaf->grad) return -1;
    }
    return 0;
  }
  /* out of place under create_graph, and when the grad is a view that repeats
  ** locations (a create_graph pass kept an expanded g): adding into it in
  ** place would add several times into one location */
  if (lt_grad_enabled() || lt_internal_overlap(leaf->grad) != LT_OVERLAP_NO) {
    lt_tensor *sum = lt_add(leaf->grad, g, lt_scalar_int(1));
    if (!sum) return -1;
    lt_tensor_release(leaf->grad);
    leaf->grad = sum;
    return 0;
  }
  lt_tensor *r = lt_add_(leaf->grad, g, lt_scalar_int(1));
  if (!r) return -1;
  lt_tensor_release(r);
  return 0;
}

static const lt_node_ops accumulate_ops = {"AccumulateGrad", accumulate_apply, NULL, NULL};

bool lt_node_is_accumulator(const lt_node *n) { return n->ops == &accumulate_ops; }

/* ---- per-tensor state ---- */

static void tensor_freed(lt_tensor *t) {
  lt_autograd_meta *m = t->autograd;
  if (t->grad_fn) { lt_node_release(t->grad_fn); t->grad_fn = NULL; }
  if (!m) return;
  if (m->grad_accumulator) {
    m->grad_accumulator->leaf = NULL;        /* the weak back-pointer */
    lt_node_release(m->grad_accumulator);
  }
  lt_tensor_release(m->view_base);
  for (lt_grad_hook *h = m->hooks; h;) {
    lt_grad_hook *nx = h->next;
    if (h->free) h->free(h);
    h = nx;
  }
  for (lt_grad_hook *h = m->post_acc_hooks; h;) {
    lt_grad_hook *nx = h->next;
    if (h->free) h->free(h);
    h = nx;
  }
  free(m);
  t->autograd = NULL;
}

void lt_autograd_init(void) { lt_tensor_free_hook = tensor_freed; }

lt_autograd_meta *lt_autograd_meta_get(lt_tensor *t) {
  if (!t->autograd) {
    t->autograd = calloc(1, sizeof(lt_autograd_meta));
    if (!t->autograd) return lt_error_null("autograd: out of memory");
    lt_autograd_init();
  }
  return t->autograd;
}

lt_edge lt_gradient_edge(lt_tensor *t) {
  lt_edge e = {NULL, 0};
  if (t->grad_fn) { e.fn = t->grad_fn; e.input_nr = t->output_nr; return e; }
  if (!t->requires_grad) return e;
  lt_autograd_meta *m = lt_autograd_meta_get(t);
  if (!m) return e;
  if (!m->grad_accumulator) {
    lt_node *acc = lt_node_new(&accumulate_ops, 0, 1, 0);
    if (!acc) return e;
    acc->leaf = t;
    /* leaf hooks registered before the accumulator existed move onto it */
    acc->pre_hooks = m->hooks;
    m->hooks = NULL;
    m->grad_accumulator = acc;
  }
  e.fn = m->grad_accumulator;
  return e;
}

static void record_meta(lt_input_meta *im, const lt_tensor *t) {
  im->ndim = t->ndim;
  im->dtype = t->dtype;
  im->device = lt_tensor_device(t);
  for (int i = 0; i < t->ndim; i++) im->sizes[i] = t->sizes[i];
}

void lt_node_set_next(lt_node *n, int i, lt_tensor *t) {
  if (!t) return;
  record_meta(&n->meta[i], t);
  lt_edge e = lt_gradient_edge(t);
  if (e.fn) lt_node_retain(e.fn);
  n->next[i] = e;
}

void lt_set_history(lt_tensor *r, lt_node *n, uint32_t k) {
  lt_node_retain(n);
  if (r->grad_fn) lt_node_release(r->grad_fn);
  r->grad_fn = n;
  r->output_nr = k;
  r->requires_grad = true;
}

bool lt_any_requires_grad(lt_tensor *const *ts, int n) {
  for (int i = 0; i < n; i++)
    if (ts[i] && ts[i]->requires_grad) return true;
  return false;
}

/* ---- saved tensors ---- */

void lt_save(lt_saved *s, lt_tensor *t, bool is_output, uint32_t output_nr) {
  s->version = atomic_load_explicit(&t->storage->version, memory_order_relaxed);
  s->is_output = is_output;
  s->output_nr = output_nr;
  s->defined = true;
  if (is_output) {
    /* an alias without history: saving the output itself would make a cycle */
    s->t = lt_tensor_alias(t, t->offset, t->ndim, t->sizes, t->strides);
  } else {
    lt_tensor_retain(t);
    s->t = t;
  }
}

lt_tensor *lt_unpack(lt_node *n, lt_saved *s, const char *what) {
  if (!s->t) {
    if (s->defined)
      return lt_error_null("Trying to backward through the graph a second time (or directly access saved "
                           "tensors after they have already been freed). Saved intermediate values of the "
                           "graph are freed when you call backward() or autograd.grad(). Specify "
                           "retain_graph=true if you need to backward through the graph a second time.");
    return NULL;   /* never saved: formula does not need it */
  }
  if (s->t->numel > 0 && s->t->storage->nbytes == 0 && s->t->storage->device.type != LT_DEV_META)
    return lt_error_null("%s: the tensor '%s' saved for backward has had its memory freed (a sharded "
                         "parameter resharded before its backward ran)", n->ops->name, what ? what : "?");
  uint32_t v = atomic_load_explicit(&s->t->storage->version, memory_order_relaxed);
  if (v != s->version) {
    char b[128];
    return lt_error_null("%s: one of the variables needed for gradient computation has been modified by an "
                         "inplace operation: [%s %s] ('%s'), which is %s of %s, is at version %u; expected "
                         "version %u instead. Hint: enable anomaly detection to find the operation that "
                         "failed to compute its gradient, with torch.autograd.set_detect_anomaly(true).",
                         n->ops->name, lt_dtype_name((lt_dtype)s->t->dtype),
                         lt_shape_str(s->t->ndim, s->t->sizes, b, sizeof b), what,
                         s->is_output ? "an output" : "an input", n->ops->name, v, s->version);
  }
  if (s->is_output && lt_grad_enabled() && lt_dtype_is_differentiable((lt_dtype)s->t->dtype)) {
    /* double backward through a saved output needs its history back */
    lt_tensor *r = lt_tensor_alias(s->t, s->t->offset, s->t->ndim, s->t->sizes, s->t->strides);
    if (r) lt_set_history(r, n, s->output_nr);
    return r;
  }
  lt_tensor_retain(s->t);
  return s->t;
}

void lt_saved_release(lt_saved *s) {
  lt_tensor_release(s->t);
  s->t = NULL;
}

/* ---- tensor API ---- */

int lt_requires_grad_(lt_tensor *t, bool requires) {
  if (requires && !lt_dtype_is_differentiable((lt_dtype)t->dtype))
    return lt_error("requires_grad_: only tensors of floating point or complex dtype can require gradients (got %s)",
                    lt_dtype_name((lt_dtype)t->dtype));
  if (!requires && t->grad_fn)
    return lt_error("requires_grad_: you can only change requires_grad flags of leaf variables; use detach() "
                    "to get a tensor without history");
  t->requires_grad = requires;
  return 0;
}

lt_tensor *lt_detach(lt_tensor *t) {
  return lt_tensor_alias(t, t->offset, t->ndim, t->sizes, t->strides);
}

int lt_detach_(lt_tensor *t) {
  if (t->autograd && t->autograd->view_base)
    return lt_error("detach_: can't detach views in-place; use detach() instead");
  if (t->grad_fn) { lt_node_release(t->grad_fn); t->grad_fn = NULL; }
  t->requires_grad = false;
  t->output_nr = 0;
  return 0;
}

typedef struct retain_hook {
  lt_grad_hook h;
  lt_tensor *t;     /* weak */
} retain_hook;

static int retain_fn(lt_grad_hook *h, lt_tensor *grad, lt_tensor **replacement) {
  (void)replacement;
  lt_tensor *t = ((retain_hook *)h)->t;
  if (!t || !grad) return 0;
  if (!t->grad) {
    t->grad = lt_grad_enabled() ? (lt_tensor_retain(grad), grad) : lt_tensor_clone_as(grad, (lt_dtype)grad->dtype);
    return t->grad ? 0 : -1;
  }
  lt_tensor *s = lt_add(t->grad, grad, lt_scalar_int(1));
  if (!s) return -1;
  lt_tensor_release(t->grad);
  t->grad = s;
  return 0;
}

static void retain_free(lt_grad_hook *h) { free(h); }

int lt_retain_grad(lt_tensor *t) {
  if (!t->requires_grad) return lt_error("retain_grad: can't retain_grad on a tensor that has requires_grad=false");
  if (!t->grad_fn) return 0;   /* leaves keep their grad anyway */
  lt_autograd_meta *m = lt_autograd_meta_get(t);
  if (!m) return -1;
  if (m->retains_grad) return 0;
  retain_hook *h = calloc(1, sizeof(retain_hook));
  if (!h) return lt_error("retain_grad: out of memory");
  h->h.fn = retain_fn;
  h->h.free = retain_free;
  h->h.slot = (int)t->output_nr;
  h->t = t;
  h->h.next = t->grad_fn->pre_hooks;
  t->grad_fn->pre_hooks = &h->h;
  m->retains_grad = true;
  return 0;
}

int lt_register_hook(lt_tensor *t, lt_grad_hook *h) {
  if (!t->requires_grad) {
    if (h->free) h->free(h);
    return lt_error("register_hook: cannot register a hook on a tensor that doesn't require gradient");
  }
  lt_node **list_owner = NULL;
  if (t->grad_fn) {
    h->slot = (int)t->output_nr;
    h->next = t->grad_fn->pre_hooks;
    t->grad_fn->pre_hooks = h;
    return 0;
  }
  lt_autograd_meta *m = lt_autograd_meta_get(t);
  if (!m) { if (h->free) h->free(h); return -1; }
  (void)list_owner;
  h->slot = 0;
  if (m->grad_accumulator) {
    h->next = m->grad_accumulator->pre_hooks;
    m->grad_accumulator->pre_hooks = h;
  } else {
    h->next = m->hooks;
    m->hooks = h;
  }
  return 0;
}

int lt_register_post_accumulate_grad_hook(lt_tensor *t, lt_grad_hook *h) {
  if (!t->requires_grad || t->grad_fn) {
    if (h->free) h->free(h);
    return lt_error("register_post_accumulate_grad_hook: post accumulate grad hooks can only be registered on leaf tensors that require grad");
  }
  lt_autograd_meta *m = lt_autograd_meta_get(t);
  if (!m) { if (h->free) h->free(h); return -1; }
  /* kept in registration order: hooks run in the order they were added */
  h->next = NULL;
  lt_grad_hook **p = &m->post_acc_hooks;
  while (*p) p = &(*p)->next;
  *p = h;
  return 0;
}

int lt_check_inplace(const char *op, lt_tensor *self) {
  if (!lt_grad_enabled()) return 0;
  lt_tensor *base = self->autograd ? self->autograd->view_base : NULL;
  if (base && base->requires_grad && !base->grad_fn)
    return lt_error("%s: a view of a leaf Variable that requires grad is being used in an in-place operation.", op);
  if (!base && self->requires_grad && !self->grad_fn)
    return lt_error("%s: a leaf Variable that requires grad is being used in an in-place operation.", op);
  return 0;
}

/* ---- formula helpers ---- */

lt_tensor *lt_zeros_from_meta(const lt_input_meta *meta) {
  return lt_tensor_new_zeros((lt_dtype)meta->dtype, meta->device, meta->ndim, meta->sizes);
}

/* ---- in-place ops on views: the base's history is rewritten ----
**
** After `v.op_(...)` on a view v of base b, b's new history is a CopySlices
** node: its gradient is b's incoming gradient with the view's region replaced
** by what op's node makes of that region; v's own history becomes a node that
** reads its region out of b's gradient. Both work on the view's geometry
** relative to a contiguous base. */

typedef struct view_geometry {
  int ndim;
  int64_t sizes[LT_MAX_DIMS], strides[LT_MAX_DIMS];
  int64_t offset;                  /* elements from the base's first element */
} view_geometry;

typedef struct copyslices_ctx {
  lt_node *fn;                     /* the in-place op's node (owned) */
  view_geometry g;
} copyslices_ctx;

static lt_tensor *region(lt_tensor *whole, const view_geometry *g) {
  return lt_tensor_alias(whole, whole->offset + g->offset, g->ndim, g->sizes, g->strides);
}

/* The same two backwards from differentiable ops, for create_graph (grad mode on during
** backward): the region is addressed by its flat 1-based positions in the base, read with
** index_select and written with index_copy, so the gradient's own graph is recorded and a
** second derivative through an in-place op on a view is right. */
static lt_tensor *region_index(const view_geometry *g) {
  int64_t n = 1;
  for (int k = 0; k < g->ndim; k++) n *= g->sizes[k];
  lt_tensor *idx = lt_tensor_new(LT_INT64, lt_device_cpu(), 1, &n);
  if (!idx) return NULL;
  int64_t *p = lt_tensor_data(idx), pos[LT_MAX_DIMS] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t off = g->offset;
    for (int k = 0; k < g->ndim; k++) off += pos[k] * g->strides[k];
    p[i] = off + 1;
    for (int k = g->ndim - 1; k >= 0 && ++pos[k] == g->sizes[k]; k--) pos[k] = 0;
  }
  return idx;
}

static lt_tensor *flat(lt_tensor *t) {
  int64_t m1 = -1;
  return lt_reshape(t, lt_intlist_make(&m1, 1));
}

static int copyslices_apply_graph(lt_node *n, lt_tensor *grad, lt_tensor **grads_out) {
  copyslices_ctx *c = n->ctx;
  lt_node *fn = c->fn;
  lt_tensor *idx = region_index(&c->g), *gflat = NULL, *picked = NULL, *slice_grad = NULL, *src = NULL,
            *base_flat = NULL;
  lt_tensor **fn_out = calloc((size_t)(fn->num_next > 0 ? fn->num_next : 1), sizeof(lt_tensor *));
  int rc = -1;
  if (!fn_out) lt_error("autograd: out of memory");
  if (!idx || !fn_out || !(gflat = flat(grad)) || !(picked = lt_index_select(gflat, 0, idx)) ||
      !(slice_grad = lt_reshape(picked, lt_intlist_make(c->g.sizes, c->g.ndim))))
    goto done;
  lt_tensor *fn_in[1] = {slice_grad};
  if (fn->ops->apply(fn, fn_in, fn_out) < 0) goto done;
  if (fn_out[0]) src = flat(fn_out[0]);
  else src = lt_tensor_new_zeros((lt_dtype)grad->dtype, lt_tensor_device(grad), 1, &idx->numel);
  if (!src || !(base_flat = lt_index_copy(gflat, 0, idx, src))) goto done;
  if (!(grads_out[0] = lt_reshape(base_flat, lt_intlist_make(grad->sizes, grad->ndim)))) goto done;
  for (int i = 1; i < fn->num_next; i++) { grads_out[i] = fn_out[i]; fn_out[i] = NULL; }
  rc = 0;
done:
  if (fn_out) for (int i = 0; i < fn->num_next; i++) lt_tensor_release(fn_out[i]);
  free(fn_out);
  lt_tensor_release(idx); lt_tensor_release(gflat); lt_tensor_release(picked); lt_tensor_release(slice_grad);
  lt_tensor_release(src); lt_tensor_release(base_flat);
  return rc;
}

static int copyslices_apply(lt_node *n, lt_tensor **grads_in, lt_tensor **grads_out) {
  copyslices_ctx *c = n->ctx;
  lt_tensor *grad = grads_in[0];
  if (!grad) return 0;
  if (lt_grad_enabled()) return copyslices_apply_graph(n, grad, grads_out);
  lt_tensor *base_grad = lt_tensor_clone_as(grad, (lt_dtype)grad->dtype);
  if (!base_grad) return -1;
  lt_tensor *slice = region(base_grad, &c->g);
  lt_tensor *slice_grad = slice ? lt_tensor_clone_as(slice, (lt_dtype)slice->dtype) : NULL;
  if (!slice_grad) { lt_tensor_release(slice); lt_tensor_release(base_grad); return -1; }
  lt_node *fn = c->fn;
  lt_tensor **fn_out = calloc((size_t)(fn->num_next > 0 ? fn->num_next : 1), sizeof(lt_tensor *));
  lt_tensor *fn_in[1] = {slice_grad};
  int rc = fn_out ? fn->ops->apply(fn, fn_in, fn_out) : lt_error("autograd: out of memory");
  if (rc == 0) {
    /* the view's old value gets fn's gradient for self; elsewhere the base passes grad through */
    if (fn_out[0]) rc = lt_tensor_copy_(slice, fn_out[0]);
    else rc = lt_tensor_fill_(slice, lt_scalar_int(0));
  }
  if (rc == 0) {
    grads_out[0] = base_grad;
    base_grad = NULL;
    for (int i = 1; i < fn->num_next; i++) { grads_out[i] = fn_out[i]; fn_out[i] = NULL; }
  }
  if (fn_out) for (int i = 0; i < fn->num_next; i++) lt_tensor_release(fn_out[i]);
  free(fn_out);
  lt_tensor_release(slice_grad);
  lt_tensor_release(slice);
  lt_tensor_release(base_grad);
  return rc;
}

static void copyslices_release(lt_node *n) {
  copyslices_ctx *c = n->ctx;
  if (c->fn && c->fn->ops->release_saved && !c->fn->saved_released) {
    c->fn->ops->release_saved(c->fn);
    c->fn->saved_released = true;
  }
}

static void copyslices_destroy(lt_node *n) {
  copyslices_ctx *c = n->ctx;
  lt_node_release(c->fn);
}

static const lt_node_ops copyslices_ops = {"CopySlices", copyslices_apply, copyslices_release, copyslices_destroy};

/* the view's history after the rewrite: its region of the base's gradient */
typedef struct viewof_ctx { view_geometry g; lt_input_meta base; } viewof_ctx;

static int viewof_apply(lt_node *n, lt_tensor **grads_in, lt_tensor **grads_out) {
  viewof_ctx *c = n->ctx;
  lt_tensor *grad = grads_in[0];
  if (!grad) return 0;
  if (lt_grad_enabled()) {   /* create_graph: the same from ops (see copyslices_apply_graph) */
    int64_t total = 1;
    for (int k = 0; k < c->base.ndim; k++) total *= c->base.sizes[k];
    lt_tensor *idx = region_index(&c->g), *src = flat(grad), *base_flat = NULL;
    lt_tensor *z = lt_tensor_new_zeros((lt_dtype)grad->dtype, c->base.device, 1, &total);
    if (idx && src && z) base_flat = lt_index_copy(z, 0, idx, src);
    if (base_flat) grads_out[0] = lt_reshape(base_flat, lt_intlist_make(c->base.sizes, c->base.ndim));
    lt_tensor_release(idx); lt_tensor_release(src); lt_tensor_release(z); lt_tensor_release(base_flat);
    return grads_out[0] ? 0 : -1;
  }
  lt_tensor *z = lt_tensor_new_zeros((lt_dtype)grad->dtype, c->base.device, c->base.ndim, c->base.sizes);
  if (!z) return -1;
  lt_tensor *slice = region(z, &c->g);
  int rc = slice ? lt_tensor_copy_(slice, grad) : -1;
  lt_tensor_release(slice);
  if (rc < 0) { lt_tensor_release(z); return -1; }
  grads_out[0] = z;
  return 0;
}

static const lt_node_ops viewof_ops = {"AsStridedBackward0", viewof_apply, NULL, NULL};

int lt_rebase_history(lt_tensor *self, lt_node *n) {
  lt_tensor *base = self->autograd ? self->autograd->view_base : NULL;
  if (!base) { lt_set_history(self, n, 0); return 0; }
  if (!lt_tensor_is_contiguous(base) || base->storage != self->storage)
    return lt_error("%s: in-place operations on views of non-contiguous tensors are not supported by autograd",
                    n->ops->name);
  view_geometry g;
  g.ndim = self->ndim;
  for (int i = 0; i < self->ndim; i++) { g.sizes[i] = self->sizes[i]; g.strides[i] = self->strides[i]; }
  g.offset = self->offset - base->offset;

  lt_node *cs = lt_node_new(&copyslices_ops, n->num_next, 1, sizeof(copyslices_ctx));
  if (!cs) return -1;
  copyslices_ctx *c = cs->ctx;
  c->g = g;
  lt_node_retain(n);
  c->fn = n;
  lt_node_set_next(cs, 0, base);                   /* the base's history before the op */
  for (int i = 1; i < n->num_next; i++) {
    cs->next[i] = n->next[i];
    if (cs->next[i].fn) lt_node_retain(cs->next[i].fn);
    cs->meta[i] = n->meta[i];
  }
  lt_node *vo = lt_node_new(&viewof_ops, 1, 1, sizeof(viewof_ctx));
  if (!vo) { lt_node_release(cs); return -1; }
  viewof_ctx *vc = vo->ctx;
  vc->g = g;
  vc->base = cs->meta[0];
  lt_set_history(base, cs, 0);
  vo->next[0].fn = cs;
  vo->next[0].input_nr = 0;
  lt_node_retain(cs);
  vo->meta[0] = cs->meta[0];
  /* the view's gradient has the view's shape */
  vo->meta[0].ndim = self->ndim;
  for (int i = 0; i < self->ndim; i++) vo->meta[0].sizes[i] = self->sizes[i];
  lt_set_history(self, vo, 0);
  lt_node_release(vo);
  lt_node_release(cs);
  return 0;
}

int lt_track_view(lt_tensor *v, lt_tensor *src) {
  if (v == src || v->storage != src->storage) return 0;   /* the op returned self or a copy */
  lt_tensor *b = (src->autograd && src->autograd->view_base) ? src->autograd->view_base : src;
  lt_autograd_meta *m = lt_autograd_meta_get(v);
  if (!m) return -1;
  if (!m->view_base) { lt_tensor_retain(b); m->view_base = b; }
  return 0;
}
