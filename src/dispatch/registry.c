/*
** registry.c — the ops defined at run time: their slots in lt_op_table, their
** boxed kernels per key, and the call through the dispatcher (argument checks
** against the schema, the keyset, the Profile hook, result checks, version
** bumps of the tensors an op writes into). See registry.h.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "registry.h"

static lt_custom_op *custom_ops[LT_MAX_CUSTOM_OPS];
static atomic_int num_custom;
static pthread_mutex_t define_lock = PTHREAD_MUTEX_INITIALIZER;

void lt_ivalue_clear(lt_ivalue *v) {
  switch (v->tag) {
  case LT_ARG_TENSOR: lt_tensor_release(v->u.t); break;
  case LT_ARG_TENSOR_LIST:
    for (int i = 0; i < v->u.tl.n; i++) lt_tensor_release(v->u.tl.v[i]);
    free(v->u.tl.v);
    break;
  case LT_ARG_INT_LIST: free(v->u.il.v); break;
  case LT_ARG_FLOAT_LIST: free(v->u.fl.v); break;
  default: break;
  }
  *v = lt_iv_none();
}

int lt_custom_count(void) { return atomic_load(&num_custom); }

lt_custom_op *lt_custom_get(int id) {
  int i = id - lt_num_ops;
  if (i < 0 || i >= atomic_load(&num_custom)) return NULL;
  return custom_ops[i];
}

lt_custom_op *lt_custom_find(const char *qualname) {
  int n = atomic_load(&num_custom);
  for (int i = 0; i < n; i++)
    if (strcmp(custom_ops[i]->schema.qualname, qualname) == 0) return custom_ops[i];
  return NULL;
}

int lt_custom_find_id(const char *qualname) {
  lt_custom_op *op = lt_custom_find(qualname);
  return op ? op->id : -1;
}

static int profile_kernel(void *ud, const lt_custom_op *op, lt_keyset ks, const lt_ivalue *args, lt_ivalue *rets) {
  (void)ud;
  /* the tensor arguments, as the generated Profile wrappers pass theirs (record_shapes) */
  const lt_tensor *in[LT_CUSTOM_MAX_ARGS];
  int n = 0;
  for (int i = 0; i < op->schema.nargs; i++)
    if (args[i].tag == LT_ARG_TENSOR) in[n++] = args[i].u.t;
  lt_dispatch_call_hook(op->id, 0, in, n);
  int rc = lt_custom_redispatch(op, ks, args, rets);
  lt_dispatch_call_hook(op->id, 1, in, n);
  return rc;
}

int lt_custom_define(const char *schema, const char *doc, const char *who, bool allow_same) {
  lt_custom_op *op = calloc(1, sizeof *op);
  if (!op) return lt_error("%s: out of memory", who);
  if (lt_schema_parse(&op->schema, schema, who) < 0) { free(op); return -1; }
  pthread_mutex_lock(&define_lock);
  lt_custom_op *old = lt_custom_find(op->schema.qualname);
  int n = atomic_load(&num_custom);
  if (old || lt_dispatch_find(op->schema.qualname) >= 0 || n == LT_MAX_CUSTOM_OPS) {
    pthread_mutex_unlock(&define_lock);
    int rc = old && allow_same && strcmp(old->schema.text, op->schema.text) == 0 ? old->id
           : n == LT_MAX_CUSTOM_OPS ? lt_error("%s: too many custom ops (at most %d)", who, LT_MAX_CUSTOM_OPS)
           : lt_error("%s: %s is already defined%s%s", who, op->schema.qualname, old ? " as " : "",
                      old ? old->schema.text : "");
    lt_schema_free(&op->schema);
    free(op);
    return rc;
  }
  op->id = lt_num_ops + n;
  lt_op_entry *e = &lt_op_table[op->id];
  char *d = doc ? strdup(doc) : NULL;
  e->doc = d ? d : "";
  e->schema = op->schema.text;
  e->flags = LT_OPF_CUSTOM | (op->schema.mutates ? LT_OPF_INPLACE : 0);
  for (int i = 0; i < op->schema.nrets; i++)
    if (op->schema.rets[i].alias && !op->schema.rets[i].is_mutable) e->flags |= LT_OPF_VIEW;
  op->kernels[LT_KEY_PROFILE] = (lt_boxed_kernel){ profile_kernel, NULL };
  e->kernel[LT_KEY_PROFILE] = &op->kernels[LT_KEY_PROFILE];
  custom_ops[n] = op;
  e->name = op->schema.qualname;   /* last: a slot with a name is a complete op */
  atomic_store(&num_custom, n + 1);
  pthread_mutex_unlock(&define_lock);
  return op->id;
}

int lt_custom_set_kernel(lt_custom_op *op, lt_dispatch_key key, lt_boxed_fn fn, void *ud) {
  if ((int)key < 0 || key >= LT_NUM_KEYS || key == LT_KEY_PROFILE)
    return lt_error("%s: no kernel can be registered at key number %d", op->schema.qualname, (int)key);
  op->kernels[key] = (lt_boxed_kernel){ fn, ud };
  lt_op_table[op->id].kernel[key] = fn ? &op->kernels[key] : NULL;
  return 0;
}

void lt_custom_release_unused(const lt_custom_op *op, const lt_boxed_kernel *old, int n, lt_boxed_fn fn,
                              void (*release)(void *ud)) {
  for (int i = 0; i < n; i++) {
    if (old[i].fn != fn || !old[i].ud) continue;
    bool used = op->fake.fn == fn && op->fake.ud == old[i].ud;
    for (int k = 0; k < LT_NUM_KEYS; k++) used |= op->kernels[k].fn == fn && op->kernels[k].ud == old[i].ud;
    for (int j = 0; j < i; j++) used |= old[j].fn == fn && old[j].ud == old[i].ud;   /* released once */
    if (!used) release(old[i].ud);
  }
}

int lt_custom_set_fake(lt_custom_op *op, lt_boxed_fn fn, void *ud) {
  op->fake = (lt_boxed_kernel){ fn, ud };
  op->has_fake = fn != NULL;
  /* the meta device runs it: a call on meta tensors gets the fake kernel's shapes */
  return lt_custom_set_kernel(op, LT_KEY_META, fn, ud);
}

int lt_custom_impl(lt_custom_op *op, const char *device, lt_boxed_fn fn, void *ud, const char *who) {
  const char *q = op->schema.qualname;
  if (!device) return lt_error("%s: %s: no device given", who, q);
  if (strcasecmp(device, "cpu") == 0) return lt_custom_set_kernel(op, LT_KEY_CPU, fn, ud);
  if (strcasecmp(device, "cuda") == 0) return lt_custom_set_kernel(op, LT_KEY_CUDA, fn, ud);
  if (strcasecmp(device, "meta") == 0) return lt_custom_set_fake(op, fn, ud);
  if (strcasecmp(device, "default") == 0 || strcasecmp(device, "CompositeExplicitAutograd") == 0) {
    lt_custom_set_kernel(op, LT_KEY_CPU, fn, ud);
    return lt_custom_set_kernel(op, LT_KEY_CUDA, fn, ud);
  }
  if (strcasecmp(device, "CompositeImplicitAutograd") == 0) {
    if (op->has_autograd)
      return lt_error("%s: %s has a registered derivative; a CompositeImplicitAutograd kernel would bypass it", who, q);
    op->composite = fn != NULL;
    lt_custom_set_kernel(op, LT_KEY_CPU, fn, ud);
    lt_custom_set_kernel(op, LT_KEY_CUDA, fn, ud);
    return lt_custom_set_kernel(op, LT_KEY_AUTOGRAD, fn, ud);
  }
  return lt_error("%s: %s: unknown device or dispatch key '%s' (cpu, cuda, default, CompositeImplicitAutograd, "
                  "CompositeExplicitAutograd, Meta)", who, q, device);
}

static const char *tag_name(int tag) {
  static const char *const names[] = {
    [LT_ARG_NONE] = "None", [LT_ARG_TENSOR] = "Tensor", [LT_ARG_TENSOR_LIST] = "Tensor[]",
    [LT_ARG_INT] = "int", [LT_ARG_FLOAT] = "float", [LT_ARG_BOOL] = "bool", [LT_ARG_STR] = "str",
    [LT_ARG_SCALAR] = "Scalar", [LT_ARG_INT_LIST] = "int[]", [LT_ARG_FLOAT_LIST] = "float[]",
  };
  return tag >= 0 && tag <= LT_ARG_FLOAT_LIST ? names[tag] : "an unknown value";
}

static bool value_matches(const lt_schema_arg *a, const lt_ivalue *v) {
  bool ok = v->tag == (int)a->type || (v->tag == LT_ARG_NONE && a->optional);
  if (ok && v->tag == LT_ARG_TENSOR && !v->u.t) ok = a->optional;
  if (ok && v->tag == LT_ARG_TENSOR_LIST)
    for (int i = 0; i < v->u.tl.n; i++) if (!v->u.tl.v[i]) ok = false;
  return ok;
}

int lt_custom_check_arg(const lt_custom_op *op, const lt_schema_arg *a, const lt_ivalue *v, const char *what) {
  if (value_matches(a, v)) return 0;
  if (what) return lt_error("%s: %s must be %s, got %s", op->schema.qualname, what, lt_arg_type_name(a), tag_name(v->tag));
  return lt_error("%s: argument '%s' must be %s, got %s", op->schema.qualname, a->name, lt_arg_type_name(a), tag_name(v->tag));
}

/* widen a value where the schema's type takes it: int -> float, numbers -> Scalar */
static void coerce(const lt_schema_arg *a, lt_ivalue *v) {
  if (a->type == LT_ARG_FLOAT && v->tag == LT_ARG_INT) *v = lt_iv_float((double)v->u.i);
  else if (a->type == LT_ARG_SCALAR && v->tag != LT_ARG_SCALAR) {
    lt_scalar sc;
    if (v->tag == LT_ARG_INT) sc = lt_scalar_int(v->u.i);
    else if (v->tag == LT_ARG_FLOAT) sc = lt_scalar_float(v->u.f);
    else if (v->tag == LT_ARG_BOOL) sc = lt_scalar_bool(v->u.b);
    else return;
    v->tag = LT_ARG_SCALAR;
    v->u.sc = sc;
  }
}

/* the call's argument values: given ones checked, missing ones defaulted; the keyset */
static int prepare_args(const lt_custom_op *op, const lt_ivalue *in, int nargs, lt_ivalue *args, lt_keyset *ks) {
  const lt_schema *s = &op->schema;
  if (nargs > s->nargs)
    return lt_error("%s: expected at most %d argument%s, got %d", s->qualname, s->nargs, s->nargs == 1 ? "" : "s", nargs);
  *ks = 0;
  for (int i = 0; i < s->nargs; i++) {
    const lt_schema_arg *a = &s->args[i];
    lt_ivalue v = i < nargs ? in[i] : lt_iv_none();
    if (v.tag == LT_ARG_TENSOR && !v.u.t) v.tag = LT_ARG_NONE;
    if (v.tag == LT_ARG_NONE && a->has_default) v = a->def;
    else if (v.tag == LT_ARG_NONE && !a->optional)
      return lt_error("%s: missing argument '%s' (%s)", s->qualname, a->name, lt_arg_type_name(a));
    coerce(a, &v);
    if (lt_custom_check_arg(op, a, &v, NULL) < 0) return -1;
    if (v.tag == LT_ARG_TENSOR) *ks |= v.u.t->keys;
    else if (v.tag == LT_ARG_TENSOR_LIST)
      for (int k = 0; k < v.u.tl.n; k++) *ks |= v.u.tl.v[k]->keys;
    args[i] = v;
  }
  if (lt_keyset_mixed_backends(*ks)) return lt_dispatch_device_mismatch(op->id, *ks);
  return 0;
}

int lt_custom_redispatch(const lt_custom_op *op, lt_keyset ks, const lt_ivalue *args, lt_ivalue *rets) {
  const lt_op_entry *e = &lt_op_table[op->id];
  int k = lt_dispatch_select(e, ks);
  if (k < 0) {
    if (ks & LT_KEYBIT(LT_KEY_META))   /* the meta device runs the fake kernel */
      return lt_error("%s: no kernel for meta tensors (register one with torch.library.register_fake(\"%s\", fn))",
                      op->schema.qualname, op->schema.qualname);
    const char *dev = (ks & LT_KEYBIT(LT_KEY_CUDA)) ? "cuda" : "cpu";
    return lt_error("%s: no kernel for %s tensors (register one with torch.library.impl(\"%s\", \"%s\", fn))",
                    op->schema.qualname, dev, op->schema.qualname, dev);
  }
  const lt_boxed_kernel *bk = e->kernel[k];
  return bk->fn(bk->ud, op, ks & lt_keyset_below(k), args, rets);
}

/* the kernel's results against the schema: types, and a written-to tensor returned as itself */
static int check_results(const lt_custom_op *op, const lt_ivalue *args, lt_ivalue *rets, const char *who) {
  const lt_schema *s = &op->schema;
  for (int i = 0; i < s->nrets; i++) {
    const lt_schema_arg *r = &s->rets[i];
    if (r->is_mutable) {
      const lt_ivalue *a = NULL;
      const char *aname = "";
      for (int k = 0; k < s->nargs; k++)
        if (s->args[k].alias == r->alias) { a = &args[k]; aname = s->args[k].name; }
      if (a && a->tag == LT_ARG_TENSOR) {
        if (rets[i].tag == LT_ARG_NONE) { lt_tensor_retain(a->u.t); rets[i] = lt_iv_tensor(a->u.t); }
        else if (rets[i].tag != LT_ARG_TENSOR || rets[i].u.t != a->u.t)
          return lt_error("%s: %s returned a new tensor for result %d, declared Tensor(%c!): it must return argument '%s' itself",
                          s->qualname, who, i + 1, r->alias, aname);
      }
    }
    if (!value_matches(r, &rets[i])) {   /* the message is made only when it is needed */
      char what[64];
      snprintf(what, sizeof what, "%s's result %d", who, i + 1);
      return lt_custom_check_arg(op, r, &rets[i], what);
    }
  }
  return 0;
}

static void clear_all(lt_ivalue *rets, int n) { for (int i = 0; i < n; i++) lt_ivalue_clear(&rets[i]); }

int lt_custom_call(lt_custom_op *op, const lt_ivalue *in, int nargs, lt_ivalue *rets) {
  const lt_schema *s = &op->schema;
  lt_ivalue args[LT_CUSTOM_MAX_ARGS];
  lt_keyset ks;
  for (int i = 0; i < s->nrets; i++) rets[i] = lt_iv_none();
  if (prepare_args(op, in, nargs, args, &ks) < 0) return -1;
  if (lt_custom_redispatch(op, lt_dispatch_keys(ks), args, rets) < 0 ||
      check_results(op, args, rets, "the kernel") < 0) {
    clear_all(rets, s->nrets);
    return -1;
  }
  /* what the op wrote into has a new version: saved copies of it are stale */
  for (int i = 0; i < s->nargs; i++) {
    if (!s->args[i].is_mutable) continue;
    if (args[i].tag == LT_ARG_TENSOR) lt_tensor_bump_version(args[i].u.t);
    else if (args[i].tag == LT_ARG_TENSOR_LIST)
      for (int k = 0; k < args[i].u.tl.n; k++) lt_tensor_bump_version(args[i].u.tl.v[k]);
  }
  return 0;
}

int lt_custom_call_fake(lt_custom_op *op, const lt_ivalue *in, lt_ivalue *rets) {
  const lt_schema *s = &op->schema;
  lt_ivalue args[LT_CUSTOM_MAX_ARGS];
  lt_keyset ks;
  for (int i = 0; i < s->nrets; i++) rets[i] = lt_iv_none();
  if (!op->has_fake) return lt_error("%s: no fake kernel (register one with torch.library.register_fake)", s->qualname);
  if (prepare_args(op, in, s->nargs, args, &ks) < 0) return -1;
  if (op->fake.fn(op->fake.ud, op, 0, args, rets) < 0 || check_results(op, args, rets, "the fake kernel") < 0) {
    clear_all(rets, s->nrets);
    return -1;
  }
  return 0;
}
