/*
** custom_autograd.h — autograd for ops defined at run time (dispatch/registry.h):
** the Autograd kernel that records a node when a derivative was registered, and
** the saved-state context that C derivatives (include/lutorch/extension.h) use.
*/
#ifndef LT_CUSTOM_AUTOGRAD_H
#define LT_CUSTOM_AUTOGRAD_H

#include "autograd/autograd.h"
#include "dispatch/registry.h"

/* Give op a derivative: its Autograd key gets the recording kernel. Refused (-1, an
** error naming who) for an op that writes into an input (Tensor(a!)) or has a
** CompositeImplicitAutograd kernel (its autograd comes from the ops it calls). */
int lt_custom_register_autograd(lt_custom_op *op, const lt_custom_autograd *ag, const char *who);

/* What every op defined at run time gets at its Autograd key before anything is
** registered: an op that writes into an input (Tensor(a!)) refuses, under grad mode,
** a written-to tensor that requires grad (the leaf rules of in-place ops, and no
** derivative to record). Called right after lt_custom_define. 0 or -1. */
int lt_custom_autograd_defaults(lt_custom_op *op);

/* The tensor inputs of a call in argument order, Tensor[] elements flattened: fills
** ts (at most max) and returns how many. */
int lt_custom_tensor_inputs(const lt_custom_op *op, const lt_ivalue *args, lt_tensor **ts, int max);
#define LT_CUSTOM_MAX_INPUTS 64

/* ---- the context of a derivative written in C ---- */
#define LT_CTX_MAX_SAVED 16
#define LT_CTX_MAX_VALUES 16
typedef struct lt_autograd_ctx {
  struct lt_node *node;                 /* weak: the node owns the context */
  int num_inputs;                       /* tensor inputs (flattened) */
  bool needs_input_grad[LT_CUSTOM_MAX_INPUTS];
  int num_saved;
  lt_saved saved[LT_CTX_MAX_SAVED];
  double values[LT_CTX_MAX_VALUES];     /* numbers the formula needs (a scale, an eps), set by setup */
  const lt_ivalue *outputs_;            /* during setup only: to tell saved outputs from inputs */
  int num_outputs_;
} lt_autograd_ctx;

/* save t (an input or a result) for backward; 0 or -1 when the context is full */
int lt_ctx_save(lt_autograd_ctx *c, lt_tensor *t);
/* saved tensor i as a new reference, checked against in-place changes since it was
** saved; NULL with the error set */
lt_tensor *lt_ctx_saved(lt_autograd_ctx *c, int i);

#endif
