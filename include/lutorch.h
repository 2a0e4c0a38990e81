/* SPDX-License-Identifier: MIT -- Copyright (c) 2026 the lutorch authors (LICENSE) */
/*
** lutorch.h — the one public header for embedding lutorch in a C program.
**
** Build with `pkg-config --cflags --libs lutorch` (C11 or later). Two APIs
** come with it:
**
**   1. The Lua side (lutorch_*): open a Lua state with torch, nn, optim and
**      data loaded, run code, hand tensors to Lua and get tensors back.
**      Every lutorch_* function runs Lua in protected mode: a Lua error never
**      longjmps out of it and never aborts; it returns NULL or -1 and
**      lutorch_last_error() holds the message (with a Lua traceback).
**
**   2. The C core (lt_*): tensors, every op (lt_add, lt_matmul, lt_sum, ...,
**      generated from the op declarations into lutorch/lt_ops.h), autograd
**      (lt_backward), random generators and the thread pool, usable without
**      any Lua state.
**
** Ownership (both APIs):
**   - Every function that returns an lt_tensor* returns a NEW reference; the
**     caller owns it and drops it with lt_tensor_release(t) (NULL is ignored).
**     lt_tensor_retain(t) takes one more.
**   - Functions never steal the references they are given: arguments are
**     borrowed, and Lua takes its own reference when a tensor is pushed.
**   - A tensor's memory lives as long as any reference to it: a C reference,
**     a Lua value, a view, or an autograd graph that saved it.
**
** Errors: core functions return NULL (or a negative int) and leave a message
** in a thread-local slot; lutorch_* functions put Lua errors in the same
** slot. Read it with lutorch_last_error() (== lt_error_message()); it stays
** valid until the next error on the same thread.
**
** Dims in the C API are 0-based; index VALUES inside index tensors are
** 1-based as in Lua. Strides and offsets count elements, not bytes.
**
** Threads: the core is thread-safe for distinct tensors (refcounts are
** atomic; grad mode and the error slot are thread-local). A lua_State is not:
** use one state from one thread at a time.
*/
#ifndef LUTORCH_H
#define LUTORCH_H

#ifdef LUTORCH_BUILDING            /* compiling lutorch itself, from src/ */
#include "lt_ops.h"
#include "autograd/autograd.h"
#include "core/rng.h"
#include "core/backend.h"
#include "cpu/parallel.h"
#else                              /* installed, or build/include in the tree */
#include "lutorch/lt_ops.h"        /* every op; pulls in tensor.h, dtype.h, error.h, dispatch.h */
#include "lutorch/autograd/autograd.h"
#include "lutorch/core/rng.h"
#include "lutorch/core/backend.h"
#include "lutorch/cpu/parallel.h"
#endif

#define LUTORCH_VERSION "0.1.0"
#define LUTORCH_VERSION_NUM 100    /* major * 10000 + minor * 100 + patch */

typedef struct lua_State lua_State;   /* the same type as in <lua.h> */

/* ------------------------------------------------------------------------
** The core in brief (declared in the headers included above)
**
**   lt_tensor *lt_tensor_from_blob(void *data, lt_dtype dt, int ndim,
**       const int64_t *sizes, const int64_t *strides,     strides NULL: contiguous
**       void (*release)(void *data, void *ctx), void *ctx);
**     wraps memory the caller owns, without copying. release (may be NULL)
**     runs once, when the last reference to the memory dies (C references,
**     Lua values, views and saved tensors all count). The memory must stay
**     valid and must not be freed by the caller until then.
**
**   t->ndim, t->sizes[i], t->strides[i], t->numel, lt_tensor_dtype(t)
**   lt_tensor_data(t)          pointer to element 0 (borrowed: valid while t is)
**   lt_tensor_is_contiguous(t) / lt_tensor_contiguous(t) (a new reference)
**   lt_tensor_new(dt, lt_device_cpu(), ndim, sizes), lt_tensor_new_zeros(...)
**   lt_add(a, b, lt_scalar_int(1)), lt_mul(a, b), lt_matmul(a, b), lt_relu(a),
**   lt_sum(a, lt_intlist_none(), false, LT_DTYPE_NONE), ...  (lutorch/lt_ops.h)
**   lt_requires_grad_(t, true), lt_backward(loss, NULL, false, false), t->grad
**   lt_tls_grad_enabled = false;     no graph recording on this thread (no_grad)
**   lt_manual_seed(seed), lt_set_num_threads(n)
**   lt_tensor_release(t)
** --------------------------------------------------------------------- */

/* "0.1.0" */
const char *lutorch_version(void);

/* The last error message on this thread (never NULL). */
const char *lutorch_last_error(void);

/* ---- Lua states ---- */

/* A new Lua state with the standard libraries, and torch, nn, optim and data
** loaded as globals (the same tables as require "torch", ...). NULL on
** failure, with the reason in lutorch_last_error(). Close with lutorch_close. */
lua_State *lutorch_open(void);

/* Load torch, nn, optim and data as globals into the caller's own state,
** which must have the standard libraries open (luaL_openlibs). 0 or -1.
** The Lua libraries are searched on package.path, to which the directory of
** an install or source tree holding liblutorch is added (see lutorch(3)). */
int lutorch_openlibs(lua_State *L);

/* Torch7 mode for the state L (lutorch-torch7(7)): mode "torch7" gives the
** names Torch7 and PyTorch share Torch7's meanings (x:add(y) in place,
** reductions to numbers, ...); "pytorch" is the default. Call it on a state
** from luaL_newstate before lutorch_openlibs, or on an open state before any
** tensor has been made in the process (lutorch_open(), then this). 0, or -1
** with the reason in lutorch_last_error(). */
int lutorch_set_compat(lua_State *L, const char *mode);

/* lua_close(L): Lua's references to tensors die here, so release callbacks of
** wrapped buffers that only Lua still held run now. NULL is ignored. */
void lutorch_close(lua_State *L);

/* ---- running code ---- */

/* Run a chunk of Lua source / a Lua file; results are discarded. 0 or -1. */
int lutorch_dostring(lua_State *L, const char *code);
int lutorch_dofile(lua_State *L, const char *path);

/* Evaluate an expression (or run a chunk ending in `return`) and return its
** first result as a tensor: a new reference, or NULL with an error. A Lua
** number or boolean result becomes a 0-d tensor (int64, float64 or bool). */
lt_tensor *lutorch_eval(lua_State *L, const char *code);

/* ---- tensors in and out ---- */

/* Push t onto the Lua stack as a tensor value. Borrows t: Lua takes its own
** reference, the caller keeps (and still releases) its own. 0 or -1. */
int lutorch_push(lua_State *L, lt_tensor *t);

/* The global `name` = t (t NULL: nil). Borrows t, as lutorch_push. 0 or -1. */
int lutorch_setglobal(lua_State *L, const char *name, lt_tensor *t);

/* The tensor at stack index idx (the value stays on the stack): a new
** reference that keeps the tensor and its memory alive after Lua drops the
** value; NULL with an error when the value is not a live tensor. */
lt_tensor *lutorch_totensor(lua_State *L, int idx);

/* The tensor at a global path ("y", "model.weight", "net.layers.1.bias";
** numeric parts index sequences): a new reference, or NULL with an error. */
lt_tensor *lutorch_getglobal(lua_State *L, const char *path);

/* ---- calling Lua ---- */

/* Call a Lua function with tensor arguments and take tensor results.
**   fn       "predict", "model" (a callable table: nn modules are),
**            "nn.functional.relu" (dotted path), "model:forward" (method:
**            the table before ':' is passed as self); NULL: call the value on
**            the top of the stack (it is popped, error or not).
**   args     nargs borrowed tensors (entries may be NULL: nil).
**   results  nresults slots receiving NEW references; nil becomes NULL, a
**            number or boolean a 0-d tensor; extra results are dropped,
**            missing ones are NULL. On error every slot is NULL.
** 0 or -1 (with lutorch_last_error()). */
int lutorch_call(lua_State *L, const char *fn, int nargs, lt_tensor *const *args,
                 int nresults, lt_tensor **results);

/* lua_pcall with a traceback: the function and its nargs arguments on the
** stack; on success nresults values replace them (LUA_MULTRET allowed); on
** error they are popped and -1 returned with the message in
** lutorch_last_error(). For calls taking values other than tensors. */
int lutorch_pcall(lua_State *L, int nargs, int nresults);

#endif
