/*
** einsum.c — einsum's equation parsed and checked against the operands' shapes
** (einsum.h).
*/
#include <stdlib.h>
#include <string.h>
#include "meta/einsum.h"

#define NLETTERS LT_EINSUM_NLETTERS
#define MAXL LT_EINSUM_MAXL

int lt_meta_einsum_letter(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

char lt_meta_einsum_char(int l) { return l < 26 ? (char)('A' + l) : (char)('a' + l - 26); }

int lt_meta_einsum_parse_term(const char *s, const char *e, int *labels, int opi) {
  int n = 0;
  bool ell = false;
  for (const char *c = s; c < e; c++) {
    if (*c == ' ') continue;
    if (*c == '.') {
      if (e - c < 3 || c[1] != '.' || c[2] != '.')
        return lt_error("einsum: found a '.' that is not part of an ellipsis ('...') in the subscripts of %s",
                        opi < 0 ? "the output" : "an operand");
      if (ell) return lt_error("einsum: more than one ellipsis ('...') in one term of the equation");
      ell = true;
      labels[n++] = LT_EINSUM_ELLIPSIS;
      c += 2;
      continue;
    }
    int l = lt_meta_einsum_letter(*c);
    if (l < 0) return lt_error("einsum: invalid subscript '%c': subscripts must be letters a-z or A-Z", *c);
    if (n >= MAXL) return lt_error("einsum: too many subscripts in one term");
    labels[n++] = l;
  }
  return n;
}

void lt_meta_einsum_free(lt_einsum_plan *p) {
  free(p->lab);
  free(p->has);
  p->lab = NULL;
  p->has = NULL;
}

int lt_meta_einsum_operands(int n, lt_tensor *const *tensors) {
  if (n < 1) return lt_error("einsum: must provide at least one operand");
  for (int i = 1; i < n; i++)
    if (tensors[i]->dtype != tensors[0]->dtype)
      return lt_error("einsum: expected all operands to have the same dtype, but operand 1 is %s and operand %d is %s",
                      lt_dtype_name((lt_dtype)tensors[0]->dtype), i + 1, lt_dtype_name((lt_dtype)tensors[i]->dtype));
  return 0;
}

/* an error: p freed */
static int fail(lt_einsum_plan *p) {
  lt_meta_einsum_free(p);
  return -1;
}

int lt_meta_einsum_terms(lt_einsum_plan *p, const char *equation, int n, lt_tensor *const *tensors) {
  memset(p, 0, sizeof *p);
  p->n = n;
  const char *arrow = strstr(equation, "->");
  const char *lhs_end = arrow ? arrow : equation + strlen(equation);
  int (*labels)[MAXL] = calloc((size_t)n, sizeof *labels), *nl = calloc((size_t)n, sizeof(int));
  p->lab = calloc((size_t)n, sizeof *p->lab);
  p->has = calloc((size_t)n, sizeof *p->has);
  int nterms = 0;
  if (!labels || !nl || !p->lab || !p->has) { lt_error("einsum: out of memory"); goto fail; }
  for (const char *s = equation;;) {
    const char *e = s;
    while (e < lhs_end && *e != ',') e++;
    if (nterms >= n) {
      lt_error("einsum: the equation has more operands than the %d tensor%s given", n, n == 1 ? "" : "s");
      goto fail;
    }
    if ((nl[nterms] = lt_meta_einsum_parse_term(s, e, labels[nterms], nterms)) < 0) goto fail;
    int nlet = 0;
    bool ell = false;
    for (int j = 0; j < nl[nterms]; j++) { if (labels[nterms][j] == LT_EINSUM_ELLIPSIS) ell = true; else nlet++; }
    int nd = tensors[nterms]->ndim;
    if (nlet > nd || (!ell && nlet != nd)) {
      lt_error("einsum: operand %d has %d dims but its subscripts in the equation name %d", nterms + 1, nd, nlet);
      goto fail;
    }
    if (ell) { p->any_ell = true; if (nd - nlet > p->ell_max) p->ell_max = nd - nlet; }
    nterms++;
    if (e >= lhs_end) break;
    s = e + 1;
  }
  if (nterms != n) {
    lt_error("einsum: the equation has %d operand%s but %d tensors were given", nterms, nterms == 1 ? "" : "s", n);
    goto fail;
  }
  /* every dim's label; "..." right aligned across the operands */
  for (int i = 0; i < n; i++) {
    int d = 0;
    for (int j = 0; j < nl[i]; j++) {
      int l = labels[i][j];
      if (l == LT_EINSUM_ELLIPSIS) {
        int ne = tensors[i]->ndim - (nl[i] - 1);
        for (int q = 0; q < ne; q++) p->lab[i][d++] = NLETTERS + p->ell_max - ne + q;
      } else {
        p->count[l]++;
        p->lab[i][d++] = l;
      }
    }
  }
  free(labels); free(nl);
  return 0;
fail:
  free(labels); free(nl);
  return fail(p);
}

/* the broadcast size of label l so far (-1: none yet) merged with s */
static int merge_size(int64_t *g, int64_t s, int l) {
  if (*g < 0 || *g == 1) { *g = s; return 0; }
  if (s == 1 || s == *g) return 0;
  if (l < NLETTERS)
    return lt_error("einsum: subscript '%c' has size %lld in one operand and %lld in another",
                    lt_meta_einsum_char(l), (long long)s, (long long)*g);
  return lt_error("einsum: the dims covered by '...' do not broadcast (%lld vs %lld)", (long long)s, (long long)*g);
}

static int repeated(int l, int i, int64_t first, int64_t s) {
  return lt_error("einsum: subscript '%c' is repeated for operand %d but the sizes don't match, %lld != %lld",
                  lt_meta_einsum_char(l), i + 1, (long long)first, (long long)s);
}

int lt_meta_einsum_sizes(lt_einsum_plan *p, lt_tensor *const *tensors, bool by_dim) {
  for (int l = 0; l < MAXL; l++) p->size[l] = -1;
  for (int i = 0; i < p->n; i++) {
    const lt_tensor *t = tensors[i];
    const int *lab = p->lab[i];
    if (by_dim) {
      for (int d = 0; d < t->ndim; d++) {
        int l = lab[d];
        for (int e = 0; e < d; e++)
          if (lab[e] == l && t->sizes[e] != t->sizes[d]) { repeated(l, i, t->sizes[e], t->sizes[d]); return fail(p); }
        if (merge_size(&p->size[l], t->sizes[d], l) < 0) return fail(p);
      }
      continue;
    }
    int64_t opsize[MAXL];
    for (int l = 0; l < MAXL; l++) opsize[l] = -1;
    for (int d = 0; d < t->ndim; d++) {
      int l = lab[d];
      if (opsize[l] < 0) opsize[l] = t->sizes[d];
      else if (opsize[l] != t->sizes[d]) { repeated(l, i, opsize[l], t->sizes[d]); return fail(p); }
    }
    for (int l = 0; l < MAXL; l++)
      if (opsize[l] >= 0 && merge_size(&p->size[l], opsize[l], l) < 0) return fail(p);
  }
  for (int l = 0; l < MAXL; l++) if (p->size[l] < 0) p->size[l] = 1;
  /* a label of size 1 broadcast against a larger size is absent from that operand */
  for (int i = 0; i < p->n; i++) {
    memset(p->has[i], 0, sizeof p->has[i]);
    for (int d = 0; d < tensors[i]->ndim; d++) {
      int l = p->lab[i][d];
      if (!(tensors[i]->sizes[d] == 1 && p->size[l] != 1)) p->has[i][l] = true;
    }
  }
  return 0;
}

int lt_meta_einsum_output(lt_einsum_plan *p, const char *equation) {
  const char *arrow = strstr(equation, "->");
  p->nout = 0;
  if (arrow) {
    int ol[MAXL + 1];
    const char *os = arrow + 2;
    int no = lt_meta_einsum_parse_term(os, os + strlen(os), ol, -1);
    if (no < 0) return fail(p);
    bool seen[MAXL] = {false};
    for (int j = 0; j < no; j++) {
      int l = ol[j];
      if (l == LT_EINSUM_ELLIPSIS) {
        for (int q = 0; q < p->ell_max; q++) p->out[p->nout++] = NLETTERS + q;
        continue;
      }
      if (!p->count[l]) {
        lt_error("einsum: output subscript '%c' does not appear in the equation for any operand", lt_meta_einsum_char(l));
        return fail(p);
      }
      if (seen[l]) {
        lt_error("einsum: output subscript '%c' appears more than once in the output", lt_meta_einsum_char(l));
        return fail(p);
      }
      seen[l] = true;
      p->out[p->nout++] = l;
    }
  } else {
    if (p->any_ell) for (int q = 0; q < p->ell_max; q++) p->out[p->nout++] = NLETTERS + q;
    for (int l = 0; l < NLETTERS; l++) if (p->count[l] == 1) p->out[p->nout++] = l;
  }
  if (p->nout > LT_MAX_DIMS) {
    lt_error("einsum: the output would have more than %d dims", LT_MAX_DIMS);
    return fail(p);
  }
  memset(p->outl, 0, sizeof p->outl);
  for (int j = 0; j < p->nout; j++) p->outl[p->out[j]] = true;
  return 0;
}

int lt_meta_einsum_plan(lt_einsum_plan *p, const char *equation, int n, lt_tensor *const *tensors) {
  memset(p, 0, sizeof *p);
  if (lt_meta_einsum_operands(n, tensors) < 0) return -1;
  if (lt_meta_einsum_terms(p, equation, n, tensors) < 0) return -1;
  if (lt_meta_einsum_sizes(p, tensors, false) < 0) return -1;
  return lt_meta_einsum_output(p, equation);
}

int lt_meta_einsum_shape(const lt_einsum_plan *p, int64_t *sizes) {
  for (int j = 0; j < p->nout; j++) sizes[j] = p->size[p->out[j]];
  return p->nout;
}
