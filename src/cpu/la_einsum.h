/*
** la_einsum.h — einsum's equation syntax, shared by the kernel (la_einsum.c)
** and its differentiable path (src/autograd/formulas_linalg.c).
** Labels: 0..51 for A-Z then a-z; -2 marks "...".
*/
#ifndef LT_LA_EINSUM_H
#define LT_LA_EINSUM_H

int lt_einsum_letter(char c);          /* label of a subscript letter, -1 if not a letter */
char lt_einsum_char(int label);        /* the letter of a label */
/* labels of one term in [s, e); opi < 0 for the output term. Count, or -1 with an error. */
int lt_einsum_parse_term(const char *s, const char *e, int *labels, int opi);

#endif
