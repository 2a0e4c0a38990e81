/*
** tensor.h — Storage and Tensor: refcounted buffers and strided views of them.
**
** Ownership: every function returning lt_tensor* or lt_storage* returns a NEW
** reference that the caller must release (lt_tensor_release), unless its
** comment says it borrows. Functions never steal references they are given.
** On failure they return NULL (or a negative int) and leave a message in the
** error slot (error.h).
**
** Dims in the C API are 0-based (negative counts from the end). Values inside
** index tensors (gather, index_select, argmax results, ...) are 1-based, as in
** Lua, so index data passes between C and Lua without conversion (TH's
** TH_INDEX_BASE convention).
*/
#ifndef LT_TENSOR_H
#define LT_TENSOR_H

#include <stdint.h>
#include <stdbool.h>
#include <stdatomic.h>
#include "core/dtype.h"
#include "core/alloc.h"
#include "core/error.h"

#define LT_MAX_DIMS 16

/* ---- devices ---- */
/* meta: tensors with sizes, strides and dtype but no data (src/metadev) */
typedef enum lt_device_type { LT_DEV_CPU = 0, LT_DEV_CUDA = 1, LT_DEV_META = 2 } lt_device_type;
typedef struct lt_device { int8_t type; int8_t index; } lt_device;
static inline lt_device lt_device_cpu(void) { lt_device d = {LT_DEV_CPU, 0}; return d; }
static inline bool lt_device_eq(lt_device a, lt_device b) { return a.type == b.type && a.index == b.index; }
/* "cpu", "cuda", "cuda:1" -> device; -1 with error on bad text. "cuda"
** without an index is the current cuda device (lt_device_current) at the
** time of the call, as PyTorch resolves torch.device("cuda") when used. */
int lt_device_parse(const char *s, lt_device *out);
/* whether t lives on the meta device (no data: every data access refuses it) */
#define LT_IS_META(t) (lt_tensor_device(t).type == LT_DEV_META)
/* The current device index of a device type, per thread, as
** torch.cuda.set_device keeps it: 0 until set. The caller checks the index
** against the backend's devices (set only what exists). */
int lt_device_current(int type);
void lt_device_set_current(int type, int index);
void lt_device_format(lt_device d, char *buf, size_t n);

/* ---- dispatch keys (ordered: a higher key wins; see src/dispatch) ---- */
typedef uint32_t lt_keyset;
typedef enum lt_dispatch_key {
  LT_KEY_CPU = 0,        /* backends first */
  LT_KEY_CUDA,
  LT_KEY_META,           /* the meta device: shape functions only (src/metadev) */
  LT_KEY_AUTOGRAD,       /* wrappers above: they receive the keyset and redispatch */
  LT_KEY_AUTOCAST,
  LT_KEY_PROFILE,
  LT_NUM_KEYS
} lt_dispatch_key;
#define LT_FIRST_WRAPPER_KEY LT_KEY_AUTOGRAD
#define LT_KEYBIT(k) ((lt_keyset)1u << (k))
/* keyset bits that name backends */
#define LT_BACKEND_KEYS (LT_KEYBIT(LT_KEY_CPU) | LT_KEYBIT(LT_KEY_CUDA) | LT_KEYBIT(LT_KEY_META))
/* the backend key of a device (an absent device, type -1, is the CPU) */
static inline lt_keyset lt_device_keys(lt_device d) {
  return LT_KEYBIT(d.type == LT_DEV_CUDA ? LT_KEY_CUDA : d.type == LT_DEV_META ? LT_KEY_META : LT_KEY_CPU);
}

/* ---- scalars ---- */
/* A complex Scalar (LT_SCALAR_COMPLEX) has its real part in v.f and its imaginary
** part in im. Only the ops named in complex_scalar_ops (src/ops/complex.lua) get one:
** every other op's generated entry point refuses it, naming the argument, so code
** that reads v.i or lt_scalar_to_double never meets it (man/complex.md). */
typedef enum lt_scalar_type { LT_SCALAR_NONE = 0, LT_SCALAR_INT, LT_SCALAR_FLOAT, LT_SCALAR_BOOL,
                              LT_SCALAR_COMPLEX } lt_scalar_type;
typedef struct lt_scalar {
  int type;
  union { int64_t i; double f; } v;
  double im;
} lt_scalar;
static inline lt_scalar lt_scalar_int(int64_t i) { lt_scalar s; s.type = LT_SCALAR_INT; s.v.i = i; s.im = 0; return s; }
static inline lt_scalar lt_scalar_float(double f) { lt_scalar s; s.type = LT_SCALAR_FLOAT; s.v.f = f; s.im = 0; return s; }
static inline lt_scalar lt_scalar_bool(bool b) { lt_scalar s; s.type = LT_SCALAR_BOOL; s.v.i = b; s.im = 0; return s; }
static inline lt_scalar lt_scalar_none(void) { lt_scalar s; s.type = LT_SCALAR_NONE; s.v.i = 0; s.im = 0; return s; }
static inline lt_scalar lt_scalar_complex(double re, double im) {
  lt_scalar s; s.type = LT_SCALAR_COMPLEX; s.v.f = re; s.im = im; return s;
}
static inline bool lt_scalar_is_complex(lt_scalar s) { return s.type == LT_SCALAR_COMPLEX; }
static inline bool lt_scalar_is_none(lt_scalar s) { return s.type == LT_SCALAR_NONE; }
static inline double lt_scalar_to_double(lt_scalar s) {
  return s.type == LT_SCALAR_FLOAT || s.type == LT_SCALAR_COMPLEX ? s.v.f : (double)s.v.i;
}
static inline int64_t lt_scalar_to_int64(lt_scalar s) { return s.type == LT_SCALAR_FLOAT ? (int64_t)s.v.f : s.v.i; }
/* dtype a scalar takes on its own: int64, the default float dtype, bool */
lt_dtype lt_scalar_dtype(lt_scalar s);

/* ---- small argument types used by op signatures ---- */
#define LT_NOINT INT64_MIN              /* "int?" absent */
typedef struct lt_intlist { const int64_t *v; int n; } lt_intlist;   /* borrowed; n < 0: absent */
static inline lt_intlist lt_intlist_none(void) { lt_intlist l = {0, -1}; return l; }
static inline lt_intlist lt_intlist_make(const int64_t *v, int n) { lt_intlist l = {v, n}; return l; }

/* ---- storage ---- */
typedef struct lt_storage {
  atomic_int refcount;
  atomic_uint version;          /* bumped by in-place ops; shared by every view */
  void *data;
  size_t nbytes;
  lt_device device;
  lt_allocator *allocator;      /* NULL for external memory */
  void (*release)(void *data, void *ctx);   /* external memory: called when the storage dies */
  void *release_ctx;
  int kind;                     /* LT_STORAGE_INLINE / _ALLOCATED / _EXTERNAL */
} lt_storage;
enum { LT_STORAGE_INLINE, LT_STORAGE_ALLOCATED, LT_STORAGE_EXTERNAL };

lt_storage *lt_storage_new(lt_device dev, size_t nbytes);
/* wrap memory owned by someone else; `release` (may be NULL) runs when the last view dies */
lt_storage *lt_storage_from_blob(void *data, size_t nbytes, lt_device dev,
                                 void (*release)(void *, void *), void *ctx);
/* Give s a fresh, uninitialised block of nbytes from its allocator, or none (nbytes 0),
** keeping the storage object and so every view and saved tensor of it: sharded training
** frees a gathered parameter's memory between its uses this way (PyTorch's
** untyped_storage().resize_). Only storages from an allocator; -1 + error otherwise or
** when out of memory (s then holds no memory). */
int lt_storage_reallocate(lt_storage *s, size_t nbytes);
void lt_storage_retain(lt_storage *s);
void lt_storage_release(lt_storage *s);
/* Hook for the Lua binding: called with +bytes / -bytes as storages are made and freed. */
extern void (*lt_storage_bytes_hook)(int64_t delta);
/* Hook for the profiler (vm/lprofiler.c): every storage lutorch allocates, inline
** ones included, as it is made (+nbytes) and freed (-nbytes); memory wrapped
** with lt_storage_from_blob is not ours and is not reported. NULL when off. */
extern void (*lt_storage_trace_hook)(const lt_storage *s, int64_t delta);

/* ---- tensor ---- */
struct lt_node;            /* autograd graph node (src/autograd) */
struct lt_autograd_meta;   /* hooks, retained grad, view info (src/autograd) */

typedef struct lt_tensor {
  atomic_int refcount;
  int8_t ndim;
  uint8_t dtype;                /* lt_dtype */
  bool requires_grad;
  bool is_wrapped_number;       /* a Lua number turned tensor: promotes like a scalar */
  lt_keyset keys;
  lt_storage *storage;
  int64_t offset;               /* in elements */
  int64_t numel;
  int64_t sizes[LT_MAX_DIMS];
  int64_t strides[LT_MAX_DIMS]; /* in elements */
  struct lt_tensor *grad;       /* owned, or NULL */
  struct lt_node *grad_fn;      /* owned, or NULL */
  uint32_t output_nr;
  struct lt_autograd_meta *autograd;
} lt_tensor;

/* Thread-local: tensors made while set carry no Autograd key (torch.inference_mode). */
extern _Thread_local bool lt_tls_inference_mode;
/* Thread-local: set while an in-place op runs through its out= kernel, so
** lt_tensor_resize_out refuses to change self's shape instead of resizing it. */
extern _Thread_local bool lt_tls_inplace_op;
/* Called with a tensor about to be freed, so autograd can drop its meta. */
extern void (*lt_tensor_free_hook)(lt_tensor *t);

/* new contiguous tensor, memory uninitialised */
lt_tensor *lt_tensor_new(lt_dtype dt, lt_device dev, int ndim, const int64_t *sizes);
lt_tensor *lt_tensor_new_zeros(lt_dtype dt, lt_device dev, int ndim, const int64_t *sizes);
lt_tensor *lt_tensor_new_like(const lt_tensor *t, lt_dtype dt);   /* same sizes and device, contiguous */
/* a view of `s` (retains s); strides NULL means contiguous */
lt_tensor *lt_tensor_new_view(lt_storage *s, lt_dtype dt, int64_t offset, int ndim,
                              const int64_t *sizes, const int64_t *strides);
/* a view sharing t's storage with new geometry (no autograd history) */
lt_tensor *lt_tensor_alias(const lt_tensor *t, int64_t offset, int ndim,
                           const int64_t *sizes, const int64_t *strides);
/* zero-copy wrap of external memory; release(data, ctx) when the tensor's storage dies */
lt_tensor *lt_tensor_from_blob(void *data, lt_dtype dt, int ndim, const int64_t *sizes,
                               const int64_t *strides, void (*release)(void *, void *), void *ctx);
/* 0-d tensors */
lt_tensor *lt_tensor_from_scalar(lt_scalar s, lt_dtype dt);
lt_tensor *lt_tensor_wrapped_number(lt_scalar s);   /* marked is_wrapped_number */

static inline void lt_tensor_retain(lt_tensor *t) { atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed); }
void lt_tensor_release(lt_tensor *t);   /* NULL is ignored */

static inline lt_dtype lt_tensor_dtype(const lt_tensor *t) { return (lt_dtype)t->dtype; }
static inline lt_device lt_tensor_device(const lt_tensor *t) { return t->storage->device; }
/* pointer to element 0 of the view (borrowed) */
static inline void *lt_tensor_data(const lt_tensor *t) {
  return (char *)t->storage->data + t->offset * (int64_t)lt_dtype_size((lt_dtype)t->dtype);
}
bool lt_tensor_is_contiguous(const lt_tensor *t);
bool lt_tensor_same_shape(const lt_tensor *a, const lt_tensor *b);
/* contiguous version: t itself (retained) if already contiguous, else a copy */
lt_tensor *lt_tensor_contiguous(lt_tensor *t);
/* contiguous copy in dtype dt (a new tensor always) */
lt_tensor *lt_tensor_clone_as(const lt_tensor *t, lt_dtype dt);
/* t itself (retained) if already of dtype dt and contiguous, else a converted copy */
lt_tensor *lt_tensor_to_dtype_contig(lt_tensor *t, lt_dtype dt);

/* dst[...] = src, broadcasting src to dst's shape, converting dtype. 0 or -1. */
int lt_tensor_copy_(lt_tensor *dst, const lt_tensor *src);
/* fill every element of dst with v */
int lt_tensor_fill_(lt_tensor *dst, lt_scalar v);
/* bump the version counter (in-place ops call it) */
static inline void lt_tensor_bump_version(lt_tensor *t) { atomic_fetch_add_explicit(&t->storage->version, 1, memory_order_relaxed); }

/* element at a flat logical (row-major) position, as double/int64 (slow path;
** host memory only: lt_tensor_to_host first for a device tensor) */
double lt_tensor_get_double(const lt_tensor *t, int64_t linear);
int64_t lt_tensor_get_int64(const lt_tensor *t, int64_t linear);
lt_scalar lt_tensor_item(const lt_tensor *t);       /* 1 element required (any device); type NONE + error otherwise */
/* item, with a complex tensor's element as a complex Scalar (item refuses it) */
lt_scalar lt_tensor_item_complex(const lt_tensor *t);

/* ---- shape helpers ---- */
/* wrap a 0-based (or negative) dim into [0, ndim); -1 with "op: dim d out of range" otherwise.
** A 0-d tensor accepts dims -1 and 0 as PyTorch does (pass ndim 0). */
int lt_wrap_dim(const char *op, int64_t dim, int ndim);
/* broadcast two shapes; returns result ndim or -1 with an error naming op */
int lt_broadcast_shapes(const char *op, int na, const int64_t *a, int nb, const int64_t *b, int64_t *out);
void lt_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
int64_t lt_shape_numel(int ndim, const int64_t *sizes);
/* geometry of t expanded to a shape (stride 0 on broadcast dims); -1 if not expandable */
int lt_expand_strides(const char *op, const lt_tensor *t, int ndim, const int64_t *sizes, int64_t *strides);
/* Check an `out=` tensor: same device, dtype castable as PyTorch allows; resize to
** `sizes` if the shape differs (reallocating storage when too small). 0 or -1. */
/* false: an out= tensor whose storage is shared and that must change size is an error
** (PyTorch's rule); true: it gets memory of its own (Torch7 resized results whatever
** viewed them; its mode sets this, once per process) */
extern bool lt_out_resize_detaches;
int lt_tensor_resize_out(const char *op, lt_tensor *out, int ndim, const int64_t *sizes);
/* format "[2, 3]" into buf */
const char *lt_shape_str(int ndim, const int64_t *sizes, char *buf, size_t n);

/* ---- type promotion (promote.c) ---- */
/* PyTorch's result_type over tensors (NULL entries are skipped): tensors with
** dims decide; 0-d tensors, then wrapped numbers, only count when they are of
** a higher category (bool < integer < floating) than everything above them. A
** wrapped float counts as the default dtype. LT_DTYPE_NONE when all are NULL. */
int lt_result_type(int n, lt_tensor *const *ts);
/* PyTorch's can_cast: no floating -> integral, no non-bool -> bool */
bool lt_can_cast(lt_dtype from, lt_dtype to);

/* ---- lists of tensors (returned by split, chunk, unbind, ...) ---- */
typedef struct lt_tensor_list { lt_tensor **v; int n; } lt_tensor_list;   /* n < 0: error */
lt_tensor_list lt_tensor_list_new(int n);   /* v zeroed */
void lt_tensor_list_release(lt_tensor_list l);   /* releases every element and the array */

/* live tensor count (debug, for leak tests) */
int64_t lt_tensor_live_count(void);

#endif
