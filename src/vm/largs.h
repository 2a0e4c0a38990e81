/*
** largs.h — argument parsing for the generated Lua bindings, and pushing
** results. Parsing never raises: it reports a mismatch in lt_parse_error so
** the binding can try the next overload, then raise once nothing matched
** (after releasing what it holds).
*/
#ifndef LT_LARGS_H
#define LT_LARGS_H

#include <lua.h>
#include <lauxlib.h>
#include "core/tensor.h"

#define LT_MAX_ARGS 24
#define LT_MAX_LIST 64

typedef enum lt_argkind {
  LT_ARG_TENSOR, LT_ARG_TENSOR_OPT, LT_ARG_TENSOR_LIST,
  LT_ARG_SCALAR, LT_ARG_SCALAR_OPT,
  LT_ARG_INT, LT_ARG_INT_OPT, LT_ARG_DIM, LT_ARG_DIM_OPT, LT_ARG_INDEX,
  LT_ARG_INTLIST, LT_ARG_INTLIST_OPT, LT_ARG_DIMLIST, LT_ARG_DIMLIST_OPT,
  LT_ARG_FLOAT, LT_ARG_BOOL, LT_ARG_BOOL_OPT, LT_ARG_STR, LT_ARG_STR_OPT,
  LT_ARG_DTYPE, LT_ARG_DTYPE_OPT, LT_ARG_DEVICE_OPT, LT_ARG_GENERATOR_OPT,
} lt_argkind;

/* The device factory functions (ops with a Device? argument and no tensor
** one) use when none is given: type -1 for none (the CPU), else what
** torch.set_default_device set, per thread (src/vm/lmeta.c). */
extern _Thread_local lt_device lt_vm_default_device;

typedef struct lt_argspec {
  const char *name;
  int kind;          /* lt_argkind */
  int kwonly;
  const char *def;   /* default as written in the schema, NULL: required */
} lt_argspec;

typedef struct lt_opspec {
  const char *name;  /* Lua name, for messages */
  const lt_argspec *args;
  int nargs;
} lt_opspec;

typedef struct lt_argval {
  lt_tensor *t;          /* Tensor / Tensor?: borrowed, or owned when `owned` */
  bool owned;            /* a Lua number wrapped as a tensor for this call */
  lt_scalar s;
  int64_t i;
  double f;
  bool b;
  const char *str;
  lt_device dev;
  struct lt_generator *gen;
  lt_intlist l;
  int lua_idx;           /* stack index the value came from, 0 if from the options table or a default */
  char sbuf[24];         /* a string default, unquoted */
  int64_t lbuf[LT_MAX_DIMS];
  struct { lt_tensor **v; int n; } list;   /* Tensor[]: array owned by the parse */
} lt_argval;

typedef struct lt_args {
  int n;                 /* entries of v filled by the parse */
  lt_argval v[LT_MAX_ARGS];
} lt_args;

typedef struct lt_parse_error {
  int score;             /* how far the best overload got; the message of the best is kept */
  char msg[256];
} lt_parse_error;

typedef struct lt_op_help {
  const char *name, *signature, *doc;
  int differentiable;
} lt_op_help;

int lt_parse_args(lua_State *L, const lt_opspec *spec, lt_args *a, lt_parse_error *err);
int lt_parse_args_at(lua_State *L, const lt_opspec *spec, lt_args *a, lt_parse_error *err, int base);
int lt_parse_raise(lua_State *L, lt_parse_error *err);   /* never returns */
void lt_parse_release(lt_args *a);

/* Push results, releasing parse temporaries first; on failure raise with the
** error slot's message, prefixed by the op's name when it lacks it. */
int lt_vm_return_tensor(lua_State *L, lt_tensor *r, lt_args *a);
int lt_vm_return_arg(lua_State *L, lt_tensor *r, lt_args *a, int which);   /* in place / out=: push the argument itself */
int lt_vm_return_tensors(lua_State *L, int rc, lt_tensor **rs, int n, lt_args *a);
int lt_vm_return_list(lua_State *L, lt_tensor_list r, lt_args *a);
int lt_vm_return_none(lua_State *L, int r, lt_args *a);
int lt_vm_return_bool(lua_State *L, int r, lt_args *a);
int lt_vm_return_scalar(lua_State *L, lt_scalar r, lt_args *a);

/* ---- names: "did you mean", options tables and keyword arguments ----
** For the hand-written functions of src/vm, with the rules and messages of
** lib/torch_class.lua (closest, check_options, signature), so a misspelt
** name reads the same whether the function is written in C or in Lua. */

/* The candidate a misspelt name most likely meant: the edit distance is
** Levenshtein's with a swap of two neighbours counting as one edit, case
** ignored, and a candidate is suggested only when it is near (at most 2
** edits, or a third of the name's length, and fewer edits than the name has
** characters). Feed candidates one by one; ties keep the first (or see ties_by_name). */
typedef struct lt_nearest {
  const char *name;      /* the misspelt name */
  const char *best;      /* the nearest candidate so far, NULL when none is near */
  int best_d;
  bool ties_by_name;     /* candidates come in no set order (a table's keys): ties go to the smaller name */
} lt_nearest;
void lt_nearest_init(lt_nearest *n, const char *name);
void lt_nearest_add(lt_nearest *n, const char *candidate);
/* the nearest of a NULL-terminated list, or NULL */
const char *lt_vm_closest(const char *name, const char *const *candidates);
int lt_vm_edit_distance(const char *a, const char *b);

/* raise "fname: unknown option 'k'" (with " (did you mean 'y'?)" when a name
** of the NULL-terminated list `allowed` is near) for the key at key_idx */
int lt_vm_unknown_option(lua_State *L, const char *fname, int key_idx, const char *const *allowed);
/* the value at idx is nil or a table whose keys are all in `allowed`; else raise */
void lt_vm_check_options(lua_State *L, int idx, const char *fname, const char *const *allowed);

/* Keyword arguments for a hand-written function, as class.signature parses
** them: the arguments from stack index `first` fill params[0..n-1] in order,
** and a trailing options table (a plain table whose keys are all strings,
** or an empty one) gives any of them by name. Trailing nils are absent
** arguments. On return slot[i] is the stack index of params[i]'s value, 0
** when it is absent or nil; values from the table are pushed on the stack.
** Raises on an unknown name (with the nearest one), a name given both by
** position and by name, too many arguments, or a last table that mixes list
** entries and names. */
void lt_vm_kwargs(lua_State *L, const char *fname, int first, const char *const *params, int *slot);

/* set by the RNG binding: the generator in a Lua value, or NULL */
extern struct lt_generator *(*lt_vm_togenerator)(lua_State *L, int idx);

extern const luaL_Reg lt_gen_functions[];
extern const luaL_Reg lt_gen_methods[];
extern const lt_op_help lt_gen_help[];

#endif
