/*
** pointwise.h — running one op of the pointwise kernel family
** (src/cuda/kernels/pointwise.h) on cuda tensors: what the op kernels of
** unary.c and binary.c share (elementwise.c has the runner).
**
** An op kernel works out the CPU's dtypes and checks (with the CPU's error
** messages), fills an lt_cuda_pw and calls lt_cuda_pw_run; LT_CUDA_REFUSED
** back means the kernels do not cover the geometry (more than 8 dims after
** merging), and the op runs the CPU's kernel under the fake driver or
** raises under a real one (PW_FALLBACK in those files, launch.h).
*/
#ifndef LT_CUDA_POINTWISE_RUN_H
#define LT_CUDA_POINTWISE_RUN_H

#include <stdbool.h>
#include "core/tensor.h"
#include "cuda/kernels/pointwise.h"

typedef struct lt_cuda_pw {
  const char *op;          /* the name in errors (NAME_ in place: lt_cuda_op_name) */
  int kop;                 /* lt_ck_pw_op */
  int nin;                 /* the op's inputs (from the family's table) */
  lt_tensor *in[3];        /* cuda tensors, or host numbers (one element) */
  lt_dtype in_dt[3];       /* what each input is converted to: dt (where's condition: bool) */
  lt_dtype dt;             /* the kernel's dtype */
  lt_dtype rdt;            /* the result's: dt, or bool for the ops with bool results */
  lt_ck_scalar p[3];       /* the op's numbers */
  int mode;
  bool div_check;          /* integer division: a zero divisor is the CPU's error */
} lt_cuda_pw;

extern const int lt_cuda_refused_marker;
#define LT_CUDA_REFUSED ((lt_tensor *)&lt_cuda_refused_marker)

/* w for op kop in dtype dt (inputs, result dtype from the family's table) */
void lt_cuda_pw_init(lt_cuda_pw *w, const char *op, int kop, lt_dtype dt);
/* p[k] = v in both forms (floats truncate toward zero for the integer form) */
void lt_cuda_pw_param(lt_cuda_pw *w, int k, lt_scalar v);
void lt_cuda_pw_paramf(lt_cuda_pw *w, int k, double v);
/* whether the family has kernel kop for inputs of dtype dt */
bool lt_cuda_pw_has(int kop, lt_dtype dt);
/* The result (out when given, retained), NULL with the error set, or
** LT_CUDA_REFUSED. */
lt_tensor *lt_cuda_pw_run(lt_cuda_pw *w, lt_tensor *out);

/* the CPU's result dtype of a binary op (a wrapped number of the same dtype
** does not promote), and of the math ops that make integers floating */
lt_dtype lt_cuda_rtype2(lt_tensor *a, lt_tensor *b);
lt_dtype lt_cuda_float_type(lt_dtype dt);
/* "op: not implemented for X tensors" (the CPU's words for a dtype it has no loop for) */
lt_tensor *lt_cuda_pw_unsupported(const char *op, lt_dtype dt);

/* in an op kernel: `op`, the name in errors (NAME_ while the in-place form runs) */
#define LT_CUDA_OPNAME(NAME) char lt_buf_[48]; const char *op = lt_cuda_op_name(lt_buf_, sizeof lt_buf_, NAME)
/* return w's result, or on refusal the CPU's kernel NAME(...) (fake driver) or an error */
#define LT_CUDA_PW_RETURN(NAME, W, OUT, ...) do { \
    lt_tensor *r_ = lt_cuda_pw_run(W, OUT); \
    if (r_ != LT_CUDA_REFUSED) return r_; \
    LT_CUDA_FALLBACK(NAME, (W)->op, (W)->dt, __VA_ARGS__); \
  } while (0)

#endif
