/*
** random.h — the CUDA backend's random-number and sequence kernels as C
** entry points: the samplers of the random ops (uniform, normal,
** exponential, bernoulli, integers in a range, dropout) and the creation
** sequences (arange/range, linspace/logspace, eye).
**
** Built twice like kernels.h's (lt_ck_random in the nvcc build, queued on a
** stream; lt_ck_host_random in the host build, run at once), from
** random.cu and creation.cu. Every output is contiguous; pointers are device
** pointers (host pointers for the host build). C, no CUDA or lutorch header.
**
** The numbers: Philox4x32-10 with the CPU generator's layout (core/rng.h):
** element i of a draw uses block base + i / per of key (k0, k1), word i % per
** (per 4, or 2 for float64 uniform/normal/exponential, 1 for integer ranges
** over 2^32). Each thread makes whole blocks from (key, block index) alone,
** so the values depend on neither the grid nor the build: the host build
** gives the CPU's numbers exactly, and so does the nvcc build for uniform,
** bernoulli, integers and dropout (normal and exponential go through the
** device's logf/sincosf, which may differ from the host's in the last bits).
*/
#ifndef LT_CUDA_KERNELS_RANDOM_H
#define LT_CUDA_KERNELS_RANDOM_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lt_ck_rng_kind {
  LT_CK_RNG_UNIFORM,       /* [a, b) */
  LT_CK_RNG_NORMAL,        /* mean a, std b (Box-Muller) */
  LT_CK_RNG_EXPONENTIAL,   /* rate a */
  LT_CK_RNG_BERNOULLI,     /* 1 with probability a */
  LT_CK_RNG_BERNOULLI_T,   /* 1 with probability probs[i] (float64, contiguous) */
  LT_CK_RNG_INT,           /* low + [0, range), range <= 2^32: a word per element */
  LT_CK_RNG_INT_BIG,       /* low + [0, range), range 0 meaning 2^64: a block per element */
  LT_CK_RNG_DROPOUT,       /* keep when (w >> 8) >= thr: out = x * scale or 0, mask */
  LT_CK_RNG_NUM_KINDS
} lt_ck_rng_kind;

typedef struct lt_ck_rng_args {
  int kind;                /* lt_ck_rng_kind */
  int dtype;               /* out's dtype (LT_CK_*) */
  void *out;               /* n elements, contiguous; NULL only for DROPOUT with a mask */
  int64_t n;
  uint32_t k0, k1;         /* the Philox key: the seed's low and high words */
  uint64_t base;           /* the first block (reserved from the generator) */
  int per;                 /* elements per block: 4, 2 or 1 (see above) */
  double a, b;
  const double *probs;     /* BERNOULLI_T */
  double *bad;             /* BERNOULLI_T: bad[0] = 1, bad[1] = p when some p is not in [0, 1] (device memory, 2 doubles) */
  int64_t low;             /* INT, INT_BIG */
  uint64_t range;
  const void *x;           /* DROPOUT: the input, dtype, contiguous; NULL: out = the scaled mask */
  uint8_t *mask;           /* DROPOUT: a bool mask, or NULL */
  uint32_t thr;
  double scale;
} lt_ck_rng_args;

typedef enum lt_ck_seq_kind {
  LT_CK_SEQ_INT,           /* istart + i * istep in int64 (wrapping) */
  LT_CK_SEQ_FLOAT,         /* fstart + i * fstep in double */
  LT_CK_SEQ_LINSPACE,      /* from both ends toward the middle (fstart, fend, fstep), base ^ v when log */
  LT_CK_SEQ_EYE,           /* 1 where i / cols == i % cols, else 0 */
  LT_CK_SEQ_NUM_KINDS
} lt_ck_seq_kind;

typedef struct lt_ck_seq_args {
  int kind, dtype;
  void *out;
  int64_t n;
  int64_t istart, istep, cols;
  double fstart, fend, fstep, base;
  int log;
} lt_ck_seq_args;

/* LT_CK_OK (kernels.h), LT_CK_EINVAL, or a launch error */
typedef int (*lt_ck_random_fn)(const lt_ck_rng_args *a, void *stream);
typedef int (*lt_ck_seq_fn)(const lt_ck_seq_args *a, void *stream);

typedef struct lt_ck_random_kernels {
  const char *name;        /* "sm_90" or "host" */
  lt_ck_random_fn random;
  lt_ck_seq_fn seq;
  const char *(*error_string)(int code);
} lt_ck_random_kernels;

int lt_ck_random(const lt_ck_rng_args *a, void *stream);
int lt_ck_seq(const lt_ck_seq_args *a, void *stream);
const lt_ck_random_kernels *lt_ck_random_device_kernels(void);

int lt_ck_host_random(const lt_ck_rng_args *a, void *stream);
int lt_ck_host_seq(const lt_ck_seq_args *a, void *stream);
const lt_ck_random_kernels *lt_ck_host_random_kernels(void);

#ifdef __cplusplus
}
#endif
#endif
