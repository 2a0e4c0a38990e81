/*
** custom_autograd.c — the Autograd kernel of ops defined at run time. When a
** derivative was registered (register_autograd, lt_ext_register_autograd) and
** an input wants a gradient, the kernel runs the op below Autograd, lets the
** derivative's setup save what it needs, and makes the results the outputs of a
** node "<ns>::<name>Backward" whose apply calls the derivative's backward.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "custom_autograd.h"

typedef struct custom_node_ctx {
  const lt_custom_op *op;
  void *user;                   /* the derivative's context; NULL once released */
  int num_outputs;
  lt_input_meta *out_meta;      /* [num_outputs]: to materialize missing gradients as zeros */
} custom_node_ctx;

int lt_custom_tensor_inputs(const lt_custom_op *op, const lt_ivalue *args, lt_tensor **ts, int max) {
  int n = 0;
  for (int i = 0; i < op->schema.nargs; i++) {
    if (args[i].tag == LT_ARG_TENSOR && n < max) ts[n++] = args[i].u.t;
    else if (args[i].tag == LT_ARG_TENSOR_LIST)
      for (int k = 0; k < args[i].u.tl.n && n < max; k++) ts[n++] = args[i].u.tl.v[k];
  }
  return n;
}

/* the tensor results, flattened like the inputs */
static int tensor_outputs(const lt_custom_op *op, lt_ivalue *rets, lt_tensor ***slots, int max) {
  int n = 0;
  for (int i = 0; i < op->schema.nrets; i++) {
    if (rets[i].tag == LT_ARG_TENSOR && n < max) slots[n++] = &rets[i].u.t;
    else if (rets[i].tag == LT_ARG_TENSOR_LIST)
      for (int k = 0; k < rets[i].u.tl.n && n < max; k++) slots[n++] = &rets[i].u.tl.v[k];
  }
  return n;
}

static void record_meta(lt_input_meta *m, const lt_tensor *t) {
  m->ndim = (int8_t)t->ndim;
  m->dtype = (uint8_t)t->dtype;
  m->device = lt_tensor_device(t);
  for (int d = 0; d < t->ndim; d++) m->sizes[d] = t->sizes[d];
}

static int node_apply(lt_node *n, lt_tensor **grads_in, lt_tensor **grads_out) {
  custom_node_ctx *c = n->ctx;
  const lt_custom_op *op = c->op;
  if (!c->user && op->autograd.free_ctx)
    return lt_error("%s: Trying to backward through the graph a second time (its saved values were freed); "
                    "specify retain_graph=true the first time", n->ops->name);
  lt_tensor *gout[LT_CUSTOM_MAX_INPUTS];
  lt_tensor *zeros[LT_CUSTOM_MAX_INPUTS] = {0};
  for (int i = 0; i < c->num_outputs; i++) {
    gout[i] = grads_in[i];
    if (!gout[i]) {
      zeros[i] = gout[i] = lt_zeros_from_meta(&c->out_meta[i]);
      if (!gout[i]) { for (int k = 0; k < i; k++) lt_tensor_release(zeros[k]); return -1; }
    }
  }
  lt_tensor *gin[LT_CUSTOM_MAX_INPUTS] = {0};
  int rc = op->autograd.backward(op->autograd.ud, op, n, c->user, gout, gin);
  for (int i = 0; i < c->num_outputs; i++) lt_tensor_release(zeros[i]);
  for (int i = 0; i < n->num_next; i++) {
    if (rc < 0 || !gin[i]) { lt_tensor_release(gin[i]); continue; }
    /* a gradient for an input that wants none is dropped; the others take the input's shape */
    if (!n->next[i].fn) { lt_tensor_release(gin[i]); continue; }
    grads_out[i] = lt_grad_to_meta(gin[i], &n->meta[i]);
    if (!grads_out[i]) {
      rc = -1;
      for (int k = 0; k < i; k++) { lt_tensor_release(grads_out[k]); grads_out[k] = NULL; }
    }
  }
  return rc;
}

static void node_release_saved(lt_node *n) {
  custom_node_ctx *c = n->ctx;
  if (c->user && c->op->autograd.free_ctx) c->op->autograd.free_ctx(c->op->autograd.ud, c->user);
  c->user = NULL;
}

static void node_destroy(lt_node *n) {
  custom_node_ctx *c = n->ctx;
  node_release_saved(n);
  free(c->out_meta);
}

static int autograd_kernel(void *ud, const lt_custom_op *op, lt_keyset ks, const lt_ivalue *args, lt_ivalue *rets) {
  (void)ud;
  lt_tensor *ins[LT_CUSTOM_MAX_INPUTS];
  int nin = lt_custom_tensor_inputs(op, args, ins, LT_CUSTOM_MAX_INPUTS);
  bool needs[LT_CUSTOM_MAX_INPUTS];
  bool any = false;
  for (int i = 0; i < nin; i++) { needs[i] = ins[i]->requires_grad; any |= needs[i]; }
  bool record = any && lt_grad_enabled();
  lt_keyset ex = lt_tls_excluded;
  lt_tls_excluded |= LT_KEYBIT(LT_KEY_AUTOGRAD);
  int rc = lt_custom_redispatch(op, ks, args, rets);
  lt_tls_excluded = ex;
  if (rc < 0 || !record) return rc;

  lt_tensor **outs[LT_CUSTOM_MAX_INPUTS];
  int nout = tensor_outputs(op, rets, outs, LT_CUSTOM_MAX_INPUTS);
  lt_node *n = lt_node_new(op->node_ops, nin, nout, sizeof(custom_node_ctx));
  if (!n) return -1;
  custom_node_ctx *c = n->ctx;
  c->op = op;
  c->num_outputs = nout;
  c->out_meta = calloc((size_t)(nout ? nout : 1), sizeof(lt_input_meta));
  if (!c->out_meta) { lt_node_release(n); return lt_error("%s: out of memory", op->schema.qualname); }
  for (int i = 0; i < nin; i++) lt_node_set_next(n, i, ins[i]);
  for (int k = 0; k < nout; k++) {
    lt_tensor *o = *outs[k];
    /* a result that is an input unchanged gets a fresh alias to carry the new history */
    for (int i = 0; i < nin; i++)
      if (o == ins[i]) {
        lt_tensor *d = lt_detach(o);
        if (!d) { lt_node_release(n); return -1; }
        lt_tensor_release(o);
        *outs[k] = o = d;
        break;
      }
    record_meta(&c->out_meta[k], o);
  }
  if (op->autograd.setup(op->autograd.ud, op, n, args, rets, needs, &c->user) < 0) {
    lt_node_release(n);
    return -1;
  }
  for (int k = 0; k < nout; k++)
    if (lt_dtype_is_differentiable((lt_dtype)(*outs[k])->dtype)) lt_set_history(*outs[k], n, (uint32_t)k);
  lt_node_release(n);
  return 0;
}

/* An op that writes into its inputs has no derivative: under grad mode, writing into a
** tensor that requires grad would leave its graph silently wrong, so it is refused. */
static int mutation_guard(void *ud, const lt_custom_op *op, lt_keyset ks, const lt_ivalue *args, lt_ivalue *rets) {
  (void)ud;
  const lt_schema *s = &op->schema;
  for (int i = 0; lt_grad_enabled() && i < s->nargs; i++) {
    if (!s->args[i].is_mutable) continue;
    int n = args[i].tag == LT_ARG_TENSOR ? 1 : args[i].tag == LT_ARG_TENSOR_LIST ? args[i].u.tl.n : 0;
    for (int k = 0; k < n; k++) {
      lt_tensor *t = args[i].tag == LT_ARG_TENSOR ? args[i].u.t : args[i].u.tl.v[k];
      if (lt_check_inplace(s->qualname, t) < 0) return -1;
      if (t->requires_grad)
        return lt_error("%s: argument '%s' requires grad, and the op writes into it (Tensor(%c!)) without a "
                        "derivative; call it under torch.no_grad() or on a detached tensor",
                        s->qualname, s->args[i].name, s->args[i].alias);
    }
  }
  lt_keyset ex = lt_tls_excluded;
  lt_tls_excluded |= LT_KEYBIT(LT_KEY_AUTOGRAD);
  int rc = lt_custom_redispatch(op, ks, args, rets);
  lt_tls_excluded = ex;
  return rc;
}

int lt_custom_autograd_defaults(lt_custom_op *op) {
  if (op->schema.mutates && !op->composite && !lt_op_table[op->id].kernel[LT_KEY_AUTOGRAD])
    return lt_custom_set_kernel(op, LT_KEY_AUTOGRAD, mutation_guard, NULL);
  return 0;
}

int lt_custom_register_autograd(lt_custom_op *op, const lt_custom_autograd *ag, const char *who) {
  const char *q = op->schema.qualname;
  if (op->composite)
    return lt_error("%s: %s has a CompositeImplicitAutograd kernel, whose autograd comes from the ops it calls", who, q);
  if (op->schema.mutates)
    return lt_error("%s: %s writes into an input (Tensor(a!)): a derivative for it is not supported", who, q);
  if (!ag->setup || !ag->backward) return lt_error("%s: %s: a derivative needs setup and backward", who, q);
  if (!op->node_ops) {
    lt_node_ops *ops = calloc(1, sizeof *ops);
    size_t len = strlen(q) + sizeof "Backward";
    char *name = malloc(len);
    if (!ops || !name) { free(ops); free(name); return lt_error("%s: out of memory", who); }
    snprintf(name, len, "%sBackward", q);
    ops->name = name;
    ops->apply = node_apply;
    ops->release_saved = node_release_saved;
    ops->destroy = node_destroy;
    op->node_ops = ops;   /* lives as long as the process, like the op */
  }
  op->autograd = *ag;
  op->has_autograd = true;
  return lt_custom_set_kernel(op, LT_KEY_AUTOGRAD, autograd_kernel, NULL);
}

/* ---- the context of a C derivative ---- */

int lt_ctx_save(lt_autograd_ctx *c, lt_tensor *t) {
  if (c->num_saved == LT_CTX_MAX_SAVED) return lt_error("save_for_backward: at most %d tensors", LT_CTX_MAX_SAVED);
  if (!t) return lt_error("save_for_backward: a NULL tensor");
  bool is_output = false;
  uint32_t nr = 0;
  for (int i = 0, k = 0; c->outputs_ && i < c->num_outputs_; i++) {
    if (c->outputs_[i].tag != LT_ARG_TENSOR) continue;
    if (c->outputs_[i].u.t == t) { is_output = true; nr = (uint32_t)k; }
    k++;
  }
  lt_save(&c->saved[c->num_saved++], t, is_output, nr);
  return 0;
}

lt_tensor *lt_ctx_saved(lt_autograd_ctx *c, int i) {
  if (i < 0 || i >= c->num_saved) return lt_error_null("saved_tensors: no saved tensor %d", i);
  return lt_unpack(c->node, &c->saved[i], "saved tensor");
}
