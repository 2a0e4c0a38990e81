/*
** lindex.h — what lindex.c (Lua's indexing syntax) and lindex_adv.c (index
** tensors and masks inside index tables) share. Every function returns -1
** (or NULL) with the error slot set instead of raising, so that callers can
** release their temporaries before the Lua error.
*/
#ifndef LT_VM_LINDEX_H
#define LT_VM_LINDEX_H

#include <stdbool.h>
#include <stdint.h>
#include <lua.h>
#include "core/tensor.h"

/* the Lua number at idx as an integer; -1 (no error set) when it is not a whole number */
int lt_vm_index_int(lua_State *L, int idx, int64_t *out);
/* 1-based index v (negative from the end) into dim `dim` (0-based, for the
** message) of size `size` -> 0-based position */
int lt_vm_index_norm(int64_t v, int dim, int64_t size, int64_t *out);
/* the Lua value at vidx as a scalar; -1 (no error set) when it is not a number or boolean */
int lt_vm_index_scalar(lua_State *L, int vidx, lt_scalar *s);

/*
** Applies the value on the top of the stack (entry `entry`, 1-based, of an
** index table, naming dim `xdim`, 0-based, of the indexed tensor: both for
** messages) to *cur at its dim *d when it is a basic entry: a number selects (the dim goes),
** a {first, last} or {i} range narrows and "{}" or ":" keeps the dim (*d
** moves on). `grad`: through the dispatched view ops, else the stride-only
** ones. Returns 1 when applied (*cur replaced), 0 when the entry is not a
** basic one, -1 on error.
*/
int lt_vm_index_basic(lua_State *L, int entry, int xdim, bool grad, lt_tensor **cur, int *d);

/* does the index table at kidx hold a tensor or a boolean (advanced indexing)? */
bool lt_vm_index_is_advanced(lua_State *L, int kidx);
/* x[key] for such a table: a new tensor, through the dispatched ops */
lt_tensor *lt_vm_index_adv_get(lua_State *L, lt_tensor *x, int kidx);
/* x[key] = the value at vidx (a number, boolean or tensor broadcast to the
** indexed shape); rec: autograd records the write */
int lt_vm_index_adv_set(lua_State *L, lt_tensor *x, int kidx, int vidx, bool rec);

#endif
