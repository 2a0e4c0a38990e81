/*
** einsum.h — einsum's equation (src/ops/linalg.lua): the subscript syntax, and
** the plan every implementation starts from (the kernels, the differentiable
** path in src/autograd/formulas_linalg.c, the meta device): the label of every
** operand dim, the broadcast size of every label, the output's labels.
** Labels: 0..51 for A-Z then a-z; then one per dim that "..." covers, right aligned
** (the last dim of every ellipsis has label LT_EINSUM_NLETTERS + ell_max - 1).
*/
#ifndef LT_META_EINSUM_H
#define LT_META_EINSUM_H

#include "meta/meta.h"

#define LT_EINSUM_NLETTERS 52
#define LT_EINSUM_MAXL (LT_EINSUM_NLETTERS + LT_MAX_DIMS)   /* letters, then the dims "..." covers */
#define LT_EINSUM_ELLIPSIS (-2)                            /* "..." in a parsed term */

int lt_meta_einsum_letter(char c);          /* label of a subscript letter, -1 if not a letter */
char lt_meta_einsum_char(int label);        /* the letter of a label */
/* labels of one term in [s, e), LT_EINSUM_ELLIPSIS for "..."; opi < 0 for the output term.
** Count (at most LT_EINSUM_MAXL), or -1 with an error. */
int lt_meta_einsum_parse_term(const char *s, const char *e, int *labels, int opi);

typedef struct lt_einsum_plan {
  int n;                                /* operands */
  int (*lab)[LT_MAX_DIMS];              /* [n]: the label of each dim of each operand (owned) */
  bool (*has)[LT_EINSUM_MAXL];          /* [n]: labels an operand has, less the size-1 dims
                                           broadcast against a larger size (owned) */
  int count[LT_EINSUM_MAXL];            /* occurrences of each letter in the operands' terms */
  int ell_max;                          /* dims the widest "..." covers */
  bool any_ell;
  int64_t size[LT_EINSUM_MAXL];         /* broadcast size of every label (1 when unused) */
  int out[LT_EINSUM_MAXL], nout;        /* the output's labels in order */
  bool outl[LT_EINSUM_MAXL];            /* whether the output keeps a label */
} lt_einsum_plan;

/* The plan of einsum(equation, tensors[0..n-1]): at least one operand, one dtype, then the
** steps below (sizes in the kernels' order). 0, or -1 with an error and nothing to free. */
int lt_meta_einsum_plan(lt_einsum_plan *p, const char *equation, int n, lt_tensor *const *tensors);
void lt_meta_einsum_free(lt_einsum_plan *p);

/* the steps: */
/* at least one operand, all of one dtype */
int lt_meta_einsum_operands(int n, lt_tensor *const *tensors);
/* the operands' terms against their ranks: lab, count, ell_max, any_ell (frees p on error) */
int lt_meta_einsum_terms(lt_einsum_plan *p, const char *equation, int n, lt_tensor *const *tensors);
/* size and has. A repeated subscript must have one size, and sizes must broadcast. The
** kernels report an operand's repeated subscripts first and then its sizes in label order;
** by_dim reports the first bad dim of an operand instead (the differentiable path).
** Frees p on error. */
int lt_meta_einsum_sizes(lt_einsum_plan *p, lt_tensor *const *tensors, bool by_dim);
/* the output's labels: after "->", else "..." and the letters used once, in order (frees p
** on error) */
int lt_meta_einsum_output(lt_einsum_plan *p, const char *equation);

/* the output's shape into sizes (LT_MAX_DIMS); its rank */
int lt_meta_einsum_shape(const lt_einsum_plan *p, int64_t *sizes);

#endif
