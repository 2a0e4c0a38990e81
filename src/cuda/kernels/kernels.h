/*
** kernels.h — the CUDA backend's elementwise kernels as C entry points: the
** strided N-d copy with dtype conversion (contiguous(), copy_ between layouts,
** casts), fill, and the unary and binary ops.
**
** The kernels are written once (ck.h, ck_math.h, *.cu) and built twice:
**   - by nvcc for sm_90: lt_ck_copy, lt_ck_fill, ... queue a launch on a CUDA
**     stream of the current context and return at once;
**   - by the host C++ compiler: lt_ck_host_copy, ... run the same kernel
**     bodies at once, serially, on host memory. This is what runs them under
**     the fake driver and in CI, where no GPU is.
** Nothing in the device build has run on a GPU yet; only the host build is
** tested (tests/c/test_cuda_kernels_host.c), and cuda-check compiles the
** device build (man/cuda.md, "Kernels and make cuda-check").
**
** This header is C: it needs no CUDA header and no lutorch header. Pointers
** are device pointers (host pointers for the host build) to element 0 of
** each operand's view; strides are in elements; a stream is a CUstream
** (cudaStream_t) passed as void *, NULL the legacy default stream; the host
** build ignores it. Operands may alias only element for element (out == a in
** place); partial overlap is the caller's to rule out (core/overlap.h).
*/
#ifndef LT_CUDA_KERNELS_H
#define LT_CUDA_KERNELS_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dtype codes: the values of lt_dtype (core/dtype.h, which is C only);
** tests/c/test_cuda_kernels_host.c checks that they agree */
enum {
  LT_CK_FLOAT64 = 0, LT_CK_FLOAT32, LT_CK_FLOAT16, LT_CK_BFLOAT16,
  LT_CK_INT64, LT_CK_INT32, LT_CK_INT16, LT_CK_INT8, LT_CK_UINT8, LT_CK_BOOL,
  LT_CK_NUM_DTYPES
};

#define LT_CK_MAX_DIMS 16       /* a geometry's dims: lutorch's LT_MAX_DIMS */
#define LT_CK_KERNEL_DIMS 8     /* what a kernel indexes, after merging */
#define LT_CK_MAX_OPERANDS 4     /* the output and up to three inputs */

/* The geometry of one launch: the iteration shape (the output's sizes) and
** each operand's strides over it, [0] the output, [1] .. [3] the inputs
** (a kernel reads only the rows it has operands for). A stride of 0
** broadcasts, a negative one runs backwards; ndim 0 is a single element.
** Dims of size 1 are dropped and dims contiguous in every operand merged
** before the launch; what is left may have up to LT_CK_KERNEL_DIMS dims
** (more: LT_CK_EINVAL, and the caller copies in pieces or on the CPU). */
typedef struct lt_ck_geom {
  int ndim;
  int64_t sizes[LT_CK_MAX_DIMS];
  int64_t strides[LT_CK_MAX_OPERANDS][LT_CK_MAX_DIMS];
} lt_ck_geom;

/* a number in both forms: floating compute types read f, integer and bool i */
typedef struct lt_ck_scalar { double f; int64_t i; } lt_ck_scalar;

typedef enum lt_ck_unary_op {
  LT_CK_NEG,       /* not bool */
  LT_CK_ABS,
  LT_CK_EXP,       /* floating dtypes only (the caller promotes integers) */
  LT_CK_RELU,      /* not bool */
  LT_CK_SIGMOID,   /* floating only */
  LT_CK_TANH,      /* floating only */
  LT_CK_NUM_UNARY
} lt_ck_unary_op;

typedef enum lt_ck_binary_op {
  LT_CK_ADD,       /* a + alpha * b */
  LT_CK_SUB,       /* a - alpha * b; not bool */
  LT_CK_MUL,
  LT_CK_DIV,       /* true division: floating only */
  LT_CK_NUM_BINARY
} lt_ck_binary_op;

/* Every entry returns LT_CK_OK, a negative LT_CK_E*, or (device build) a
** positive cudaError_t from the launch. error_string names each. */
enum {
  LT_CK_OK = 0,
  LT_CK_EUNSUPPORTED = -1,  /* the op is not defined for the dtype (e.g. div of int32) */
  LT_CK_EINVAL = -2,        /* bad dtype or op code, ndim, negative size, NULL pointer */
};

/*
** copy: dst[i] = convert(src[i]) over the geometry (strides row 0 dst, row 1
**   src). Same dtype: the bits are moved. Otherwise the CPU's conversions:
**   float -> integer saturates through int64 (NaN -> 0) and wraps to narrower
**   types, anything -> bool is x != 0, double and integers reach the 16-bit
**   floats through float, 16-bit floats round to nearest even.
** fill: dst[i] = *value, where value is one element of dtype in host memory
**   (the caller converts the number; strides row 0).
** unary: out[i] = op(a[i]), out and a of dtype (rows 0, 1).
** binary: out[i] = op(a[i], b[i]) (rows 0, 1, 2), alpha used by add and sub.
**   One of a and b may be NULL: that operand is the number at `number`, one
**   element of dtype in host memory (a wrapped Lua number); its strides are
**   ignored. All three operands are of dtype: inputs of another dtype are
**   converted first (with copy) by the caller.
** 16-bit floats compute in float, as on the CPU.
*/
typedef int (*lt_ck_copy_fn)(void *dst, int dst_dtype, const void *src, int src_dtype,
                             const lt_ck_geom *g, void *stream);
typedef int (*lt_ck_fill_fn)(void *dst, int dtype, const void *value, const lt_ck_geom *g,
                             void *stream);
typedef int (*lt_ck_unary_fn)(int op, int dtype, void *out, const void *a, const lt_ck_geom *g,
                              void *stream);
typedef int (*lt_ck_binary_fn)(int op, int dtype, void *out, const void *a, const void *b,
                               const void *number, lt_ck_scalar alpha, const lt_ck_geom *g,
                               void *stream);

/* one build's entry points, for a backend that picks a build at run time */
typedef struct lt_ck_kernels {
  const char *name;                  /* "sm_90" or "host" */
  lt_ck_copy_fn copy;
  lt_ck_fill_fn fill;
  lt_ck_unary_fn unary;
  lt_ck_binary_fn binary;
  const char *(*error_string)(int code);
} lt_ck_kernels;

/* the nvcc build (objects from make cuda-check, $(BUILD)/cuda/kernels/) */
int lt_ck_copy(void *dst, int dst_dtype, const void *src, int src_dtype, const lt_ck_geom *g, void *stream);
int lt_ck_fill(void *dst, int dtype, const void *value, const lt_ck_geom *g, void *stream);
int lt_ck_unary(int op, int dtype, void *out, const void *a, const lt_ck_geom *g, void *stream);
int lt_ck_binary(int op, int dtype, void *out, const void *a, const void *b, const void *number,
                 lt_ck_scalar alpha, const lt_ck_geom *g, void *stream);
const char *lt_ck_error_string(int code);
const lt_ck_kernels *lt_ck_device_kernels(void);

/* the host build ($(BUILD)/obj/cuda_host/) */
int lt_ck_host_copy(void *dst, int dst_dtype, const void *src, int src_dtype, const lt_ck_geom *g, void *stream);
int lt_ck_host_fill(void *dst, int dtype, const void *value, const lt_ck_geom *g, void *stream);
int lt_ck_host_unary(int op, int dtype, void *out, const void *a, const lt_ck_geom *g, void *stream);
int lt_ck_host_binary(int op, int dtype, void *out, const void *a, const void *b, const void *number,
                      lt_ck_scalar alpha, const lt_ck_geom *g, void *stream);
const char *lt_ck_host_error_string(int code);
const lt_ck_kernels *lt_ck_host_kernels(void);

/* Test knobs, in both builds (process-wide, not thread-safe: tests only).
** force_index64: take the 64-bit index path even where 32 bits would do.
** path_counts: launches since the last reset by path: [0] vectorised
** contiguous, [1] strided with 32-bit indices, [2] strided with 64-bit. */
enum { LT_CK_PATH_VEC, LT_CK_PATH_STRIDED32, LT_CK_PATH_STRIDED64, LT_CK_NUM_PATHS };
void lt_ck_force_index64(int on);
void lt_ck_path_counts(long counts[LT_CK_NUM_PATHS], int reset);
void lt_ck_host_force_index64(int on);
void lt_ck_host_path_counts(long counts[LT_CK_NUM_PATHS], int reset);

#ifdef __cplusplus
}
#endif
#endif
