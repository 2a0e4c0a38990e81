/*
** autograd.h — the tape: graph nodes, saved tensors, grad modes, and the
** engine that runs a graph backwards.
**
** Ownership: a tensor owns its grad_fn; a node owns the nodes of its next
** edges and its saved tensors. A leaf owns its AccumulateGrad node, which
** points back at the leaf weakly (cleared when the leaf dies), so graphs are
** freed by refcounts alone. A node never saves its own output with that
** output's grad_fn (that would be a cycle): saved outputs are detached
** aliases.
*/
#ifndef LT_AUTOGRAD_H
#define LT_AUTOGRAD_H

#include "core/tensor.h"

typedef struct lt_node lt_node;

typedef struct lt_edge {
  lt_node *fn;          /* NULL: the input does not need a gradient */
  uint32_t input_nr;    /* which of fn's outputs this edge feeds */
} lt_edge;

/* what a gradient for one input must look like */
typedef struct lt_input_meta {
  int8_t ndim;
  uint8_t dtype;
  lt_device device;
  int64_t sizes[LT_MAX_DIMS];
} lt_input_meta;

/* a tensor saved for backward, with the version it had when saved */
typedef struct lt_saved {
  lt_tensor *t;
  uint32_t version;
  bool is_output;       /* saved output: stored detached; unpacking re-attaches the node */
  bool defined;         /* something was saved (stays set after the tensor is freed) */
  uint32_t output_nr;
} lt_saved;

/* A hook on gradients: returns 0 and may set *replacement (a new reference),
** or -1 with an error. Used for register_hook, retain_grad and Lua hooks. */
typedef struct lt_grad_hook lt_grad_hook;
struct lt_grad_hook {
  int (*fn)(lt_grad_hook *h, lt_tensor *grad, lt_tensor **replacement);
  void (*free)(lt_grad_hook *h);
  lt_grad_hook *next;
  int slot;             /* for pre-hooks: which of the node's incoming grads */
};

typedef struct lt_node_ops {
  const char *name;     /* "MulBackward0" */
  /* grads_in[num_outputs] (NULL entries mean zero), grads_out[num_next] set to new
  ** references or NULL; 0 or -1 with an error */
  int (*apply)(lt_node *n, lt_tensor **grads_in, lt_tensor **grads_out);
  void (*release_saved)(lt_node *n);    /* drop saved tensors (after backward) */
  void (*destroy)(lt_node *n);          /* free the op's context */
} lt_node_ops;

struct lt_node {
  atomic_int refcount;
  const lt_node_ops *ops;
  uint64_t seq;                 /* creation order; later nodes run first */
  int num_next;
  int num_outputs;
  lt_edge *next;                /* [num_next] */
  lt_input_meta *meta;          /* [num_next] */
  bool saved_released;          /* backward ran without retain_graph */
  lt_grad_hook *pre_hooks;      /* on incoming grads (tensor hooks, retain_grad) */
  lt_tensor *leaf;              /* AccumulateGrad only: weak */
  void *ctx;                    /* the op's saved state */
  char *anomaly_trace;          /* forward traceback when anomaly mode recorded one */
  /* engine scratch (one backward at a time per graph) */
  int32_t dependencies;
  uint32_t epoch;
  lt_tensor **buffer;           /* [num_outputs] incoming grads being summed */
};

/* per-tensor autograd state beyond the fields in lt_tensor */
typedef struct lt_autograd_meta {
  lt_node *grad_accumulator;    /* leaves: owned */
  lt_tensor *view_base;         /* views: the tensor viewed (owned) */
  bool retains_grad;
  lt_grad_hook *hooks;          /* leaf hooks (run before accumulation) */
  lt_grad_hook *post_acc_hooks; /* leaf hooks run after .grad was accumulated: fn(h, leaf, NULL) */
} lt_autograd_meta;

/* ---- grad mode (thread-local) ---- */
extern _Thread_local bool lt_tls_grad_enabled;
static inline bool lt_grad_enabled(void) { return lt_tls_grad_enabled; }
extern bool lt_anomaly_enabled;
/* set by the VM: a traceback of the current Lua call, for anomaly mode (malloc'd) */
extern char *(*lt_anomaly_trace_hook)(void);

/* ---- nodes ---- */
lt_node *lt_node_new(const lt_node_ops *ops, int num_next, int num_outputs, size_t ctx_size);
static inline void lt_node_retain(lt_node *n) { atomic_fetch_add_explicit(&n->refcount, 1, memory_order_relaxed); }
void lt_node_release(lt_node *n);   /* iterative: a chain of a million nodes frees without recursion */
int64_t lt_node_live_count(void);

/* the edge a gradient for t should flow along (creates a leaf's AccumulateGrad) */
lt_edge lt_gradient_edge(lt_tensor *t);
/* connect input i of node n to t's history and record t's metadata */
void lt_node_set_next(lt_node *n, int i, lt_tensor *t);
/* make n the history of output r (output number k) */
void lt_set_history(lt_tensor *r, lt_node *n, uint32_t k);
/* history of self after an in-place op recorded as n: when self is a view, the base's history
** is rewritten (CopySlices) and self reads its region of it */
int lt_rebase_history(lt_tensor *self, lt_node *n);
/* remember that v is a view of src's base (views of views share the root) */
int lt_track_view(lt_tensor *v, lt_tensor *src);
bool lt_any_requires_grad(lt_tensor *const *ts, int n);
/* split, chunk and unbind: make the pieces between begin and end, which records
** one node for all of them (and tracks them as views of self) */
bool lt_split_begin(lt_tensor *self, lt_keyset *saved_excluded);
int lt_split_end(lt_tensor *self, lt_tensor_list l, int dim, bool stacked, bool began, lt_keyset saved_excluded);

/* save t for backward in n; is_output for the node's own outputs */
void lt_save(lt_saved *s, lt_tensor *t, bool is_output, uint32_t output_nr);
/* a new reference to the saved tensor after checking its version; NULL + error if it was
** modified in place since it was saved or freed by a backward without retain_graph */
lt_tensor *lt_unpack(lt_node *n, lt_saved *s, const char *what);
void lt_saved_release(lt_saved *s);

/* ---- tensor-level autograd ---- */
lt_autograd_meta *lt_autograd_meta_get(lt_tensor *t);   /* creates on demand */
int lt_requires_grad_(lt_tensor *t, bool requires);
lt_tensor *lt_detach(lt_tensor *t);       /* a new alias without history */
int lt_detach_(lt_tensor *t);
int lt_retain_grad(lt_tensor *t);
int lt_register_hook(lt_tensor *t, lt_grad_hook *h);   /* takes ownership of h */
/* a hook on a leaf called as fn(h, leaf, NULL) each time its .grad has been accumulated
** during backward (DDP marks the parameter ready there); takes ownership of h */
int lt_register_post_accumulate_grad_hook(lt_tensor *t, lt_grad_hook *h);
/* run fn(h, NULL, NULL) when the backward running on this thread has finished its graph
** (after every .grad was accumulated); -1 when no backward runs. Takes ownership of h;
** callbacks queued by a callback run too. A failing callback fails the backward. */
int lt_autograd_queue_callback(lt_grad_hook *h);
int lt_check_inplace(const char *op, lt_tensor *self);  /* leaf / view rules for in-place ops */

/* ---- the engine ---- */
typedef struct lt_backward_opts {
  bool retain_graph;
  bool create_graph;
  bool accumulate;          /* true: backward() into .grad; false: autograd.grad() */
  lt_tensor *const *inputs; /* backward(inputs=...) or grad(inputs) */
  int num_inputs;
  bool allow_unused;
} lt_backward_opts;

/* Runs the graph from roots with the given gradients (NULL: ones for a scalar root).
** For autograd.grad (accumulate false) results[i] receives the gradient of inputs[i]
** (a new reference, or NULL when unused and allowed). 0 or -1. */
int lt_run_backward(lt_tensor *const *roots, lt_tensor *const *grads, int n,
                    const lt_backward_opts *opts, lt_tensor **results);
int lt_backward(lt_tensor *root, lt_tensor *grad, bool retain_graph, bool create_graph);

/* ---- helpers for derivative formulas ---- */
/* grad reduced to the shape of meta by summing broadcast dims, and cast to its dtype */
lt_tensor *lt_grad_to_meta(lt_tensor *grad, const lt_input_meta *meta);
lt_tensor *lt_zeros_from_meta(const lt_input_meta *meta);
lt_tensor *lt_grad_scale(lt_tensor *grad, lt_scalar alpha);   /* alpha * grad (grad itself when 1) */
lt_tensor *lt_grad_identity(lt_tensor *grad);                 /* grad, a new reference */
/* to(device)'s backward: grad moved back to the input's device */
lt_tensor *lt_grad_to_device(lt_tensor *grad, const lt_input_meta *self_meta);
/* to(dtype)'s: grad in the source's dtype (autocast's bfloat16 gradients reach a float32
** tensor as float32); a complex grad of a real source gives its real part */
lt_tensor *lt_grad_to_dtype(lt_tensor *grad, const lt_input_meta *self_meta);

void lt_autograd_init(void);    /* installs the tensor free hook; idempotent */

/* Profiling (vm/lprofiler.c). The engine calls the hook around each node's
** apply, phase 0 before and 1 after (after a failure too); NULL, the default,
** costs one branch per node. lt_node_seq_peek is the seq the next node will
** get: read before and after an op, it says which nodes the op made. */
extern void (*lt_autograd_node_hook)(const lt_node *n, int phase);
uint64_t lt_node_seq_peek(void);

#endif
