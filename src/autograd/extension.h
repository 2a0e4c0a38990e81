/*
** extension.h (src/autograd) — the C functions behind include/lutorch/extension.h:
** an op declared once with a schema string, its kernels per backend, its
** derivative and its shape (fake) function, all written in C. These wrap the
** run-time registry (dispatch/registry.h) and the custom Autograd kernel
** (custom_autograd.h) with plain C function types; see man/extension.md.
*/
#ifndef LT_EXTENSION_API_H
#define LT_EXTENSION_API_H

#include "autograd/custom_autograd.h"

/* a kernel: args in schema order (defaults filled in), rets to fill with new references */
typedef int (*lt_ext_kernel)(const lt_ivalue *args, lt_ivalue *rets);
/* after a forward that records a graph: save what backward needs (lt_ctx_save, ctx->values) */
typedef int (*lt_ext_setup)(lt_autograd_ctx *ctx, const lt_ivalue *args, const lt_ivalue *rets);
/* grad_outputs: one per tensor result; grad_inputs: one per tensor input, new references or NULL */
typedef int (*lt_ext_backward)(lt_autograd_ctx *ctx, lt_tensor *const *grad_outputs, lt_tensor **grad_inputs);

/* Define the op (a second definition with the same schema returns the first). Its
** op id, or -1 with the error set. */
int lt_ext_define(const char *schema, const char *doc);
/* A kernel for device "cpu", "cuda", "default", "CompositeImplicitAutograd" (see
** lt_custom_impl in dispatch/registry.h). 0 or -1. */
int lt_ext_impl(const char *qualname, const char *device, lt_ext_kernel fn);
/* The shape function: results with the real kernel's shapes and dtypes, data untouched. */
int lt_ext_register_fake(const char *qualname, lt_ext_kernel fn);
/* The derivative. */
int lt_ext_register_autograd(const char *qualname, lt_ext_setup setup, lt_ext_backward backward);
/* Call an op defined at run time from C, through the dispatcher. 0 or -1. */
int lt_ext_call(const char *qualname, const lt_ivalue *args, int nargs, lt_ivalue *rets);

#endif
