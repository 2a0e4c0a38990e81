/*
** extension.c — the C extension API (autograd/extension.h): adapters from plain
** C kernel and derivative functions to the registry's boxed kernels and the
** custom Autograd kernel's setup/backward/free_ctx.
*/
#include <stdlib.h>
#include <string.h>
#include "extension.h"

typedef struct c_kernel { lt_ext_kernel fn; } c_kernel;
typedef struct c_derivative { lt_ext_setup setup; lt_ext_backward backward; } c_derivative;

static int run_c_kernel(void *ud, const lt_custom_op *op, lt_keyset ks, const lt_ivalue *args, lt_ivalue *rets) {
  (void)op; (void)ks;
  return ((c_kernel *)ud)->fn(args, rets);
}

static lt_custom_op *find(const char *qualname, const char *who) {
  lt_custom_op *op = qualname ? lt_custom_find(qualname) : NULL;
  if (!op) lt_error("%s: no op named %s (define it first with lt_ext_define)", who, qualname ? qualname : "(NULL)");
  return op;
}

/* the boxed kernel's context: kept for the process, like the op it serves */
static c_kernel *wrap(lt_ext_kernel fn, const char *who) {
  c_kernel *k = malloc(sizeof *k);
  if (!k) { lt_error("%s: out of memory", who); return NULL; }
  k->fn = fn;
  return k;
}

int lt_ext_define(const char *schema, const char *doc) {
  lt_init();
  int id = lt_custom_define(schema, doc, "lt_ext_define", true);
  if (id < 0 || lt_custom_autograd_defaults(lt_custom_get(id)) < 0) return -1;
  return id;
}

int lt_ext_impl(const char *qualname, const char *device, lt_ext_kernel fn) {
  lt_custom_op *op = find(qualname, "lt_ext_impl");
  if (!op) return -1;
  c_kernel *k = fn ? wrap(fn, "lt_ext_impl") : NULL;
  if (fn && !k) return -1;
  lt_boxed_kernel old[LT_NUM_KEYS + 1];
  memcpy(old, op->kernels, sizeof op->kernels);
  old[LT_NUM_KEYS] = op->fake;
  if (lt_custom_impl(op, device, fn ? run_c_kernel : NULL, k, "lt_ext_impl") < 0) { free(k); return -1; }
  lt_custom_release_unused(op, old, LT_NUM_KEYS + 1, run_c_kernel, free);   /* what was replaced */
  return 0;
}

int lt_ext_register_fake(const char *qualname, lt_ext_kernel fn) {
  lt_custom_op *op = find(qualname, "lt_ext_register_fake");
  if (!op) return -1;
  c_kernel *k = fn ? wrap(fn, "lt_ext_register_fake") : NULL;
  if (fn && !k) return -1;
  lt_boxed_kernel old = op->fake;
  lt_custom_set_fake(op, fn ? run_c_kernel : NULL, k);
  lt_custom_release_unused(op, &old, 1, run_c_kernel, free);
  return 0;
}

static int c_setup(void *ud, const lt_custom_op *op, lt_node *node, const lt_ivalue *args, const lt_ivalue *rets,
                   const bool *needs_grad, void **ctx) {
  c_derivative *d = ud;
  lt_autograd_ctx *c = calloc(1, sizeof *c);
  if (!c) return lt_error("%s: out of memory", op->schema.qualname);
  lt_tensor *ins[LT_CUSTOM_MAX_INPUTS];
  c->node = node;
  c->num_inputs = lt_custom_tensor_inputs(op, args, ins, LT_CUSTOM_MAX_INPUTS);
  memcpy(c->needs_input_grad, needs_grad, sizeof(bool) * (size_t)c->num_inputs);
  c->outputs_ = rets;
  c->num_outputs_ = op->schema.nrets;
  int rc = d->setup(c, args, rets);
  c->outputs_ = NULL;
  if (rc < 0) {
    for (int i = 0; i < c->num_saved; i++) lt_saved_release(&c->saved[i]);
    free(c);
    return -1;
  }
  *ctx = c;
  return 0;
}

static int c_backward(void *ud, const lt_custom_op *op, lt_node *node, void *ctx, lt_tensor *const *gout, lt_tensor **gin) {
  (void)op; (void)node;
  return ((c_derivative *)ud)->backward(ctx, gout, gin);
}

static void c_free_ctx(void *ud, void *ctx) {
  (void)ud;
  lt_autograd_ctx *c = ctx;
  for (int i = 0; i < c->num_saved; i++) lt_saved_release(&c->saved[i]);
  free(c);
}

int lt_ext_register_autograd(const char *qualname, lt_ext_setup setup, lt_ext_backward backward) {
  const char *who = "lt_ext_register_autograd";
  lt_custom_op *op = find(qualname, who);
  if (!op) return -1;
  if (!setup || !backward) return lt_error("%s: %s: setup and backward must both be given", who, qualname);
  c_derivative *d = malloc(sizeof *d);
  if (!d) return lt_error("%s: out of memory", who);
  d->setup = setup;
  d->backward = backward;
  lt_custom_autograd ag = { c_setup, c_backward, c_free_ctx, d };
  lt_custom_autograd old = op->autograd;
  if (lt_custom_register_autograd(op, &ag, who) < 0) { free(d); return -1; }
  /* nodes recorded with the old derivative read op->autograd when they run, so the
  ** old context may be freed now */
  if (old.setup == c_setup) free(old.ud);
  return 0;
}

int lt_ext_call(const char *qualname, const lt_ivalue *args, int nargs, lt_ivalue *rets) {
  lt_custom_op *op = find(qualname, "lt_ext_call");
  return op ? lt_custom_call(op, args, nargs, rets) : -1;
}
