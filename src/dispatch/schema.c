/*
** schema.c — parsing the schema strings of ops defined at run time, in
** PyTorch's syntax:
**
**   ns::name[.overload](Type name[=default], ..., *, kwonly, ...) -> Ret | (Ret, ...) | ()
**
** Types: Tensor, int (SymInt), float, bool, str, Scalar, Tensor[], int[], float[], each
** optional with a trailing `?`. A tensor may carry an alias annotation: Tensor(a)
** (aliases set a) or Tensor(a!) (writes into it). The parser checks what a kernel
** writer could get wrong, so a bad schema fails at define time with a message
** saying where, rather than at the first call.
*/
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "registry.h"

typedef struct parser {
  const char *s, *p;       /* the text and the position */
  const char *who;         /* the caller's name, for errors */
} parser;

static int fail(parser *ps, const char *what) {
  return lt_error("%s: bad schema \"%s\": %s (at column %d)", ps->who, ps->s, what, (int)(ps->p - ps->s) + 1);
}

static void skip_space(parser *ps) { while (isspace((unsigned char)*ps->p)) ps->p++; }

static bool eat(parser *ps, const char *tok) {
  skip_space(ps);
  size_t n = strlen(tok);
  if (strncmp(ps->p, tok, n) != 0) return false;
  ps->p += n;
  return true;
}

/* an identifier into buf; 0 or -1 */
static int ident(parser *ps, char *buf, size_t n, const char *what) {
  skip_space(ps);
  const char *b = ps->p;
  if (!(isalpha((unsigned char)*b) || *b == '_')) {
    char msg[96];
    snprintf(msg, sizeof msg, "expected %s", what);
    return fail(ps, msg);
  }
  while (isalnum((unsigned char)*ps->p) || *ps->p == '_') ps->p++;
  size_t k = (size_t)(ps->p - b);
  if (k >= n) return fail(ps, "name too long");
  memcpy(buf, b, k);
  buf[k] = 0;
  return 0;
}

const char *lt_arg_type_name(const lt_schema_arg *a) {
  static const char *const base[] = {
    [LT_ARG_NONE] = "None", [LT_ARG_TENSOR] = "Tensor", [LT_ARG_TENSOR_LIST] = "Tensor[]",
    [LT_ARG_INT] = "int", [LT_ARG_FLOAT] = "float", [LT_ARG_BOOL] = "bool", [LT_ARG_STR] = "str",
    [LT_ARG_SCALAR] = "Scalar", [LT_ARG_INT_LIST] = "int[]", [LT_ARG_FLOAT_LIST] = "float[]",
  };
  static const char *const opt[] = {
    [LT_ARG_NONE] = "None", [LT_ARG_TENSOR] = "Tensor?", [LT_ARG_TENSOR_LIST] = "Tensor[]?",
    [LT_ARG_INT] = "int?", [LT_ARG_FLOAT] = "float?", [LT_ARG_BOOL] = "bool?", [LT_ARG_STR] = "str?",
    [LT_ARG_SCALAR] = "Scalar?", [LT_ARG_INT_LIST] = "int[]?", [LT_ARG_FLOAT_LIST] = "float[]?",
  };
  return a->optional ? opt[a->type] : base[a->type];
}

/* Type, annotation, [] and ?; fills a's type fields */
static int parse_type(parser *ps, lt_schema_arg *a) {
  char t[32];
  if (ident(ps, t, sizeof t, "a type") < 0) return -1;
  const char *at = ps->p;
  if (*ps->p == '(') {   /* alias annotation: (a) or (a!) */
    if (strcmp(t, "Tensor") != 0) return fail(ps, "only a Tensor may carry an alias annotation");
    ps->p++;
    if (!islower((unsigned char)*ps->p)) return fail(ps, "an alias annotation is a lowercase letter: Tensor(a) or Tensor(a!)");
    a->alias = *ps->p++;
    if (*ps->p == '!') { a->is_mutable = true; ps->p++; }
    if (*ps->p != ')') return fail(ps, "expected ')' closing the alias annotation");
    ps->p++;
  }
  (void)at;
  bool list = false;
  if (*ps->p == '[') {
    ps->p++;
    while (isdigit((unsigned char)*ps->p)) ps->p++;   /* int[2]: the size is a hint only */
    if (*ps->p != ']') return fail(ps, "expected ']'");
    ps->p++;
    list = true;
  }
  if (*ps->p == '?') { a->optional = true; ps->p++; }
  if (strcmp(t, "Tensor") == 0) a->type = list ? LT_ARG_TENSOR_LIST : LT_ARG_TENSOR;
  else if (strcmp(t, "int") == 0 || strcmp(t, "SymInt") == 0) a->type = list ? LT_ARG_INT_LIST : LT_ARG_INT;
  else if (strcmp(t, "float") == 0) a->type = list ? LT_ARG_FLOAT_LIST : LT_ARG_FLOAT;
  else if (!list && strcmp(t, "bool") == 0) a->type = LT_ARG_BOOL;
  else if (!list && strcmp(t, "str") == 0) a->type = LT_ARG_STR;
  else if (!list && strcmp(t, "Scalar") == 0) a->type = LT_ARG_SCALAR;
  else {
    char msg[192];
    snprintf(msg, sizeof msg, "unknown type '%s%s' (Tensor, int, float, bool, str, Scalar, Tensor[], int[], float[])",
             t, list ? "[]" : "");
    return fail(ps, msg);
  }
  return 0;
}

static int parse_number(parser *ps, double *d, bool *is_int) {
  skip_space(ps);
  char *end;
  const char *b = ps->p;
  double v = strtod(b, &end);
  if (end == b) return -1;
  *is_int = true;
  for (const char *q = b; q < end; q++) if (*q == '.' || *q == 'e' || *q == 'E' || *q == 'n' || *q == 'i') *is_int = false;
  *d = v;
  ps->p = end;
  return 0;
}

static int parse_default(parser *ps, lt_schema_arg *a) {
  skip_space(ps);
  a->has_default = true;
  if (eat(ps, "None")) {
    if (!a->optional) return fail(ps, "default None for an argument that is not optional (add '?' to its type)");
    a->def = lt_iv_none();
    return 0;
  }
  double d; bool is_int;
  switch (a->type) {
  case LT_ARG_TENSOR: case LT_ARG_TENSOR_LIST:
    return fail(ps, "a tensor's default can only be None");
  case LT_ARG_BOOL:
    if (eat(ps, "True")) { a->def = lt_iv_bool(true); return 0; }
    if (eat(ps, "False")) { a->def = lt_iv_bool(false); return 0; }
    return fail(ps, "a bool's default is True or False");
  case LT_ARG_STR: {
    char q = *ps->p;
    if (q != '\'' && q != '"') return fail(ps, "a str's default is quoted: 'text'");
    const char *b = ++ps->p;
    while (*ps->p && *ps->p != q) ps->p++;
    if (!*ps->p) return fail(ps, "unterminated string default");
    char *s = malloc((size_t)(ps->p - b) + 1);
    if (!s) return lt_error("%s: out of memory", ps->who);
    memcpy(s, b, (size_t)(ps->p - b));
    s[ps->p - b] = 0;
    ps->p++;
    a->def.tag = LT_ARG_STR;
    a->def.u.s = s;
    return 0;
  }
  case LT_ARG_INT:
    if (parse_number(ps, &d, &is_int) < 0 || !is_int) return fail(ps, "an int's default is an integer");
    a->def = lt_iv_int((int64_t)d);
    return 0;
  case LT_ARG_FLOAT:
    if (parse_number(ps, &d, &is_int) < 0) return fail(ps, "a float's default is a number");
    a->def = lt_iv_float(d);
    return 0;
  case LT_ARG_SCALAR:
    if (eat(ps, "True")) { a->def.tag = LT_ARG_SCALAR; a->def.u.sc = lt_scalar_bool(true); return 0; }
    if (eat(ps, "False")) { a->def.tag = LT_ARG_SCALAR; a->def.u.sc = lt_scalar_bool(false); return 0; }
    if (parse_number(ps, &d, &is_int) < 0) return fail(ps, "a Scalar's default is a number");
    a->def.tag = LT_ARG_SCALAR;
    a->def.u.sc = is_int ? lt_scalar_int((int64_t)d) : lt_scalar_float(d);
    return 0;
  case LT_ARG_INT_LIST: case LT_ARG_FLOAT_LIST: {
    bool ints = a->type == LT_ARG_INT_LIST;
    double vals[LT_MAX_DIMS * 2];
    int n = 0;
    if (eat(ps, "[")) {
      if (!eat(ps, "]")) {
        do {
          if (n == (int)(sizeof vals / sizeof vals[0])) return fail(ps, "list default too long");
          if (parse_number(ps, &vals[n], &is_int) < 0 || (ints && !is_int))
            return fail(ps, ints ? "an int[]'s default is a list of integers" : "a float[]'s default is a list of numbers");
          n++;
        } while (eat(ps, ","));
        if (!eat(ps, "]")) return fail(ps, "expected ']' closing the list default");
      }
    } else {   /* int[2] stride=1: one number stands for the list */
      if (parse_number(ps, &vals[0], &is_int) < 0 || (ints && !is_int))
        return fail(ps, "a list's default is [v, ...] or one number");
      n = 1;
    }
    a->def.tag = a->type;
    if (ints) {
      a->def.u.il.v = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
      if (!a->def.u.il.v) return lt_error("%s: out of memory", ps->who);
      for (int i = 0; i < n; i++) a->def.u.il.v[i] = (int64_t)vals[i];
      a->def.u.il.n = n;
    } else {
      a->def.u.fl.v = malloc(sizeof(double) * (size_t)(n ? n : 1));
      if (!a->def.u.fl.v) return lt_error("%s: out of memory", ps->who);
      memcpy(a->def.u.fl.v, vals, sizeof(double) * (size_t)n);
      a->def.u.fl.n = n;
    }
    return 0;
  }
  default:
    return fail(ps, "this type takes no default");
  }
}

static char *dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int parse_args(parser *ps, lt_schema *s) {
  bool kwonly = false, seen_default = false;
  if (eat(ps, ")")) return 0;
  do {
    if (eat(ps, "*")) {
      if (kwonly) return fail(ps, "'*' appears twice");
      kwonly = true;
      continue;
    }
    if (s->nargs == LT_CUSTOM_MAX_ARGS) return fail(ps, "too many arguments");
    lt_schema_arg *a = &s->args[s->nargs];
    memset(a, 0, sizeof *a);
    if (parse_type(ps, a) < 0) return -1;
    char name[64];
    if (ident(ps, name, sizeof name, "an argument name") < 0) return -1;
    for (int i = 0; i < s->nargs; i++)
      if (strcmp(s->args[i].name, name) == 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "argument name '%s' appears twice", name);
        return fail(ps, msg);
      }
    a->name = dup(name);
    if (!a->name) return lt_error("%s: out of memory", ps->who);
    s->nargs++;   /* counted now so lt_schema_free frees it on any later failure */
    a->kwonly = kwonly;
    if (eat(ps, "=")) {
      if (parse_default(ps, a) < 0) return -1;
      seen_default = true;
    } else if (seen_default && !kwonly) {
      char msg[128];
      snprintf(msg, sizeof msg, "argument '%s' has no default but follows one that has", name);
      return fail(ps, msg);
    }
    if (a->alias) {
      for (int i = 0; i < s->nargs - 1; i++)
        if (s->args[i].alias == a->alias) {
          char msg[128];
          snprintf(msg, sizeof msg, "alias set '%c' is used by two arguments ('%s' and '%s')", a->alias, s->args[i].name, name);
          return fail(ps, msg);
        }
      if (a->is_mutable) s->mutates = true;
    }
  } while (eat(ps, ","));
  if (!eat(ps, ")")) return fail(ps, "expected ',' or ')' after an argument");
  return 0;
}

static int parse_ret(parser *ps, lt_schema *s) {
  if (s->nrets == LT_CUSTOM_MAX_RETS) return fail(ps, "too many results");
  lt_schema_arg *r = &s->rets[s->nrets];
  memset(r, 0, sizeof *r);
  if (parse_type(ps, r) < 0) return -1;
  s->nrets++;
  skip_space(ps);
  if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {   /* a named result */
    char name[64];
    if (ident(ps, name, sizeof name, "a result name") < 0) return -1;
    r->name = dup(name);
    if (!r->name) return lt_error("%s: out of memory", ps->who);
  }
  if (r->alias) {
    const lt_schema_arg *a = NULL;
    for (int i = 0; i < s->nargs; i++) if (s->args[i].alias == r->alias) a = &s->args[i];
    char msg[160];
    if (!a) {
      snprintf(msg, sizeof msg, "result alias set '%c' names no argument", r->alias);
      return fail(ps, msg);
    }
    if (a->is_mutable != r->is_mutable) {
      snprintf(msg, sizeof msg, "result Tensor(%c%s) must match argument '%s' Tensor(%c%s)", r->alias,
               r->is_mutable ? "!" : "", a->name, a->alias, a->is_mutable ? "!" : "");
      return fail(ps, msg);
    }
  }
  return 0;
}

int lt_schema_parse(lt_schema *s, const char *text, const char *who) {
  memset(s, 0, sizeof *s);
  parser ps = { text, text, who };
  if (!text) return lt_error("%s: the schema must be a string", who);
  char ns[64], name[64], overload[64] = "";
  if (ident(&ps, ns, sizeof ns, "a namespace (\"mylib::name(...) -> ...\")") < 0) return -1;
  if (*ps.p != ':' || ps.p[1] != ':') return fail(&ps, "an op name is qualified with its namespace: \"mylib::name(...) -> ...\"");
  ps.p += 2;
  if (ident(&ps, name, sizeof name, "the op's name after '::'") < 0) return -1;
  if (*ps.p == '.') {
    ps.p++;
    if (ident(&ps, overload, sizeof overload, "an overload name after '.'") < 0) return -1;
  }
  if (!eat(&ps, "(")) return fail(&ps, "expected '(' after the op's name");
  char full[200];
  snprintf(full, sizeof full, "%s%s%s", name, overload[0] ? "." : "", overload);
  s->ns = dup(ns);
  s->name = dup(full);
  snprintf(full, sizeof full, "%s::%s%s%s", ns, name, overload[0] ? "." : "", overload);
  s->qualname = dup(full);
  s->text = dup(text);
  if (!s->ns || !s->name || !s->qualname || !s->text) { lt_schema_free(s); return lt_error("%s: out of memory", who); }
  if (parse_args(&ps, s) < 0) goto bad;
  if (!eat(&ps, "->")) { fail(&ps, "expected '->' and the results"); goto bad; }
  skip_space(&ps);
  if (*ps.p == '(') {
    ps.p++;
    if (!eat(&ps, ")")) {
      do { if (parse_ret(&ps, s) < 0) goto bad; } while (eat(&ps, ","));
      if (!eat(&ps, ")")) { fail(&ps, "expected ')' closing the results"); goto bad; }
    }
  } else if (parse_ret(&ps, s) < 0) goto bad;
  skip_space(&ps);
  if (*ps.p) { fail(&ps, "unexpected text after the results"); goto bad; }
  for (int i = 0; i < s->nrets; i++)
    if (s->rets[i].optional) { ps.p = text + strlen(text); fail(&ps, "a result cannot be optional"); goto bad; }
  return 0;
bad:
  lt_schema_free(s);
  return -1;
}

static void free_default(lt_ivalue *v) {
  if (v->tag == LT_ARG_STR) free((void *)v->u.s);
  else if (v->tag == LT_ARG_INT_LIST) free(v->u.il.v);
  else if (v->tag == LT_ARG_FLOAT_LIST) free(v->u.fl.v);
  v->tag = LT_ARG_NONE;
}

void lt_schema_free(lt_schema *s) {
  for (int i = 0; i < s->nargs; i++) { free(s->args[i].name); if (s->args[i].has_default) free_default(&s->args[i].def); }
  for (int i = 0; i < s->nrets; i++) free(s->rets[i].name);
  free(s->qualname); free(s->ns); free(s->name); free(s->text);
  memset(s, 0, sizeof *s);
}
