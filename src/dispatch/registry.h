/*
** registry.h — ops defined at run time: torch.library from Lua and C
** extensions (include/lutorch/extension.h).
**
** A custom op takes a slot of lt_op_table after the generated ones (ids
** LT_NUM_OPS .. LT_NUM_OPS + LT_MAX_CUSTOM_OPS - 1), so everything that reads
** the table by op id (lt_dispatch_find, the profiler's hook, the dispatch
** errors) sees it like a built-in op. Its schema is parsed at run time
** (PyTorch's syntax: "mylib::scale(Tensor x, float s) -> Tensor"), so its
** kernels cannot have typed C signatures: they are "boxed", taking the
** arguments as an array of tagged values (lt_ivalue) in schema order and
** filling the results. A slot's kernel[k] points at the op's lt_boxed_kernel
** for key k, so lt_dispatch_select works unchanged: Profile (the hook),
** Autograd (src/autograd/custom_autograd.c, where a derivative was
** registered, or a CompositeImplicitAutograd kernel), then the backend key.
**
** Ownership: argument values are borrowed. Result tensors are new
** references and result lists malloc'd: lt_ivalue_clear drops them.
*/
#ifndef LT_DISPATCH_REGISTRY_H
#define LT_DISPATCH_REGISTRY_H

#include "dispatch/dispatch.h"

#define LT_CUSTOM_MAX_ARGS 32
#define LT_CUSTOM_MAX_RETS 8

/* the schema types (Tensor?, int? ... are the type with optional set) */
typedef enum lt_arg_type {
  LT_ARG_NONE = 0,     /* an ivalue's tag only: no value (None, an absent optional) */
  LT_ARG_TENSOR, LT_ARG_TENSOR_LIST, LT_ARG_INT, LT_ARG_FLOAT, LT_ARG_BOOL,
  LT_ARG_STR, LT_ARG_SCALAR, LT_ARG_INT_LIST, LT_ARG_FLOAT_LIST,
} lt_arg_type;

/* one argument or result value; tag is an lt_arg_type */
typedef struct lt_ivalue {
  int tag;
  union {
    lt_tensor *t;
    struct { lt_tensor **v; int n; } tl;
    int64_t i;
    double f;
    bool b;
    const char *s;
    lt_scalar sc;
    struct { int64_t *v; int n; } il;
    struct { double *v; int n; } fl;
  } u;
} lt_ivalue;

static inline lt_ivalue lt_iv_none(void) { lt_ivalue v; v.tag = LT_ARG_NONE; v.u.i = 0; return v; }
static inline lt_ivalue lt_iv_tensor(lt_tensor *t) { lt_ivalue v; v.tag = t ? LT_ARG_TENSOR : LT_ARG_NONE; v.u.t = t; return v; }
static inline lt_ivalue lt_iv_int(int64_t i) { lt_ivalue v; v.tag = LT_ARG_INT; v.u.i = i; return v; }
static inline lt_ivalue lt_iv_float(double f) { lt_ivalue v; v.tag = LT_ARG_FLOAT; v.u.f = f; return v; }
static inline lt_ivalue lt_iv_bool(bool b) { lt_ivalue v; v.tag = LT_ARG_BOOL; v.u.b = b; return v; }
/* drop what a result value owns (tensor references, list arrays); leaves it NONE */
void lt_ivalue_clear(lt_ivalue *v);

typedef struct lt_schema_arg {
  char *name;          /* NULL for unnamed results */
  lt_arg_type type;
  bool optional;       /* Tensor?, int? ...: None is allowed */
  bool kwonly;         /* after `*` */
  char alias;          /* the alias set of Tensor(a) / Tensor(a!): 'a'; 0 without */
  bool is_mutable;     /* Tensor(a!): the op writes into it */
  bool has_default;
  lt_ivalue def;       /* the default (lists and strings owned by the schema) */
} lt_schema_arg;

typedef struct lt_schema {
  char *qualname;      /* "mylib::scale" (with ".overload" when it has one) */
  char *ns;            /* "mylib" */
  char *name;          /* "scale" (or "scale.out") */
  char *text;          /* the schema as given */
  int nargs, nrets;
  lt_schema_arg args[LT_CUSTOM_MAX_ARGS];
  lt_schema_arg rets[LT_CUSTOM_MAX_RETS];
  bool mutates;        /* some argument is Tensor(a!) */
} lt_schema;

/* Parse "ns::name(args) -> rets"; 0, or -1 with an error naming `who` and what is wrong.
** The checks: a qualified name, known types, unique argument names, defaults of the
** argument's type, annotations on tensors only, a result's alias set naming an
** argument's with the same mutability, no alias set used twice among arguments. */
int lt_schema_parse(lt_schema *s, const char *text, const char *who);
void lt_schema_free(lt_schema *s);
const char *lt_arg_type_name(const lt_schema_arg *a);   /* "Tensor", "int[]", ... (static) */

typedef struct lt_custom_op lt_custom_op;

/* A boxed kernel: args[nargs] in schema order (defaults filled, borrowed), rets[nrets]
** to fill (new references). ks is the keyset below the kernel's key (wrappers
** redispatch with it; backend kernels ignore it). 0, or -1 with the error set. */
typedef int (*lt_boxed_fn)(void *ud, const lt_custom_op *op, lt_keyset ks, const lt_ivalue *args, lt_ivalue *rets);
typedef struct lt_boxed_kernel { lt_boxed_fn fn; void *ud; } lt_boxed_kernel;

/* A derivative (src/autograd/custom_autograd.c records it): setup runs after the
** forward when a graph is recorded, with the node the results will point at, and
** returns a context in *ctx; needs_grad[i] says whether tensor input i (argument
** order, Tensor[] elements flattened) wants a gradient. backward gets the gradient
** of each tensor result (never NULL: zeros are materialized) and sets
** grad_inputs[i], one per tensor input, to new references or NULL. free_ctx drops
** the context (after a backward without retain_graph, or with the node). */
struct lt_node;
typedef struct lt_custom_autograd {
  int (*setup)(void *ud, const lt_custom_op *op, struct lt_node *node, const lt_ivalue *args,
               const lt_ivalue *rets, const bool *needs_grad, void **ctx);
  int (*backward)(void *ud, const lt_custom_op *op, struct lt_node *node, void *ctx,
                  lt_tensor *const *grad_outputs, lt_tensor **grad_inputs);
  void (*free_ctx)(void *ud, void *ctx);
  void *ud;
} lt_custom_autograd;

struct lt_custom_op {
  int id;                                  /* slot in lt_op_table */
  lt_schema schema;
  lt_boxed_kernel kernels[LT_NUM_KEYS];    /* lt_op_table[id].kernel[k] == &kernels[k] when set */
  lt_boxed_kernel fake;                    /* register_fake's shape function: the Meta key's kernel */
  bool has_fake;
  bool composite;                          /* a CompositeImplicitAutograd kernel sits at Autograd */
  bool has_autograd;
  lt_custom_autograd autograd;
  void *node_ops;                          /* the autograd node type (custom_autograd.c) */
};

/* Define an op from its schema; the op id, or -1 with an error naming `who` (bad
** schema, name taken). With allow_same, defining a name again with the same schema
** text returns the op already defined (a C extension opened by a second Lua state). */
int lt_custom_define(const char *schema, const char *doc, const char *who, bool allow_same);
/* the op with that qualified name ("mylib::scale"), or NULL */
lt_custom_op *lt_custom_find(const char *qualname);
int lt_custom_find_id(const char *qualname);              /* its op id, or -1 */
lt_custom_op *lt_custom_get(int id);                      /* NULL when id is not a custom op */
int lt_custom_count(void);                                /* how many are defined */
/* Put a kernel at a key (fn NULL clears it). 0, or -1 with an error. */
int lt_custom_set_kernel(lt_custom_op *op, lt_dispatch_key key, lt_boxed_fn fn, void *ud);
/* Put a kernel where a torch.library dispatch name says: "cpu", "cuda", "default" or
** "CompositeExplicitAutograd" (both backends), "CompositeImplicitAutograd" (the
** Autograd key too: the kernel calls other ops, which record the graph), "Meta" (the
** fake kernel). Names are case-insensitive. 0, or -1 with an error naming who. */
int lt_custom_impl(lt_custom_op *op, const char *device, lt_boxed_fn fn, void *ud, const char *who);
/* After a registration replaced kernels: the contexts (ud) of the kernels in old[0..n-1]
** whose function is fn and that no key (nor the fake slot) of op uses any more are given,
** each once, to release. How the Lua binding and the C API free what they wrapped. */
void lt_custom_release_unused(const lt_custom_op *op, const lt_boxed_kernel *old, int n, lt_boxed_fn fn,
                              void (*release)(void *ud));
/* register_fake: kept for shape inference (opcheck now; the Meta key's kernel) */
int lt_custom_set_fake(lt_custom_op *op, lt_boxed_fn fn, void *ud);
/* run the fake kernel: as a kernel call, results to rets */
int lt_custom_call_fake(lt_custom_op *op, const lt_ivalue *args, lt_ivalue *rets);

/* Call the op through the dispatcher. args has nargs values in schema order
** (nargs <= the schema's; missing or NONE trailing values take their defaults);
** each is checked against its argument's type, with an error naming the op and the
** argument. rets receives the schema's nrets results. 0, or -1 with the error set. */
int lt_custom_call(lt_custom_op *op, const lt_ivalue *args, int nargs, lt_ivalue *rets);
/* from a wrapper kernel: run the highest kernel in ks */
int lt_custom_redispatch(const lt_custom_op *op, lt_keyset ks, const lt_ivalue *args, lt_ivalue *rets);
/* the "op: argument 'x' must be T, got U" check of one value; 0 or -1 */
int lt_custom_check_arg(const lt_custom_op *op, const lt_schema_arg *a, const lt_ivalue *v, const char *what);

#endif
