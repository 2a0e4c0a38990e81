/*
** lcomplex.h — complex numbers as Lua values (torch.complex_number, torch.j):
** what complex tensors' item(), totable() and x[i] give, and what
** torch.tensor{...}, arithmetic with tensors and x[i] = v take.
*/
#ifndef LT_LCOMPLEX_H
#define LT_LCOMPLEX_H

#include <stdbool.h>
#include <lua.h>
#include "core/tensor.h"

/* push re + im j as a complex value */
void lt_vm_push_complex(lua_State *L, double re, double im);
/* true, with its parts, when the value at idx is a complex value (numbers are not) */
bool lt_vm_tocomplex(lua_State *L, int idx, double *re, double *im);
/* one element of dtype dt at p: a boolean, an integer, a float or a complex value */
void lt_vm_push_element(lua_State *L, lt_dtype dt, const void *p);
/* a 0-d complex128 "wrapped number" tensor (it promotes like a Python complex
** scalar: a complex tensor keeps its dtype, a real one becomes complex); NULL
** with the error slot set when out of memory */
lt_tensor *lt_vm_complex_wrapped(double re, double im);

#endif
