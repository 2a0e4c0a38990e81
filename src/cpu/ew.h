/*
** ew.h — internal to the elementwise kernels (ew_*.c, ops_elementwise.c):
** dtype lists for instantiating loops, load/store conversions, and the loop
** templates. A loop gets n elements of each operand (operand 0 is the output)
** with byte strides; the templates specialise the contiguous and the
** "one side is a broadcast scalar" runs so the compiler vectorises them.
*/
#ifndef LT_EW_H
#define LT_EW_H

#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include "core/tensor.h"
#include "cpu/iter.h"
#include "cpu/cvt.h"
#include "meta/meta.h"

/* 16-bit floats through the compiler's _Float16 when it has one: with F16C
** each conversion is one instruction instead of a call */
#if defined(__FLT16_MAX__)
static inline float ew_h2f(lt_half h) { _Float16 x; memcpy(&x, &h, 2); return (float)x; }
static inline lt_half ew_f2h(float f) { _Float16 x = (_Float16)f; lt_half h; memcpy(&h, &x, 2); return h; }
#else
#define ew_h2f lt_half_to_float
#define ew_f2h lt_float_to_half
#endif

/* Lists: M(ENUM, storage type, compute type, short name, X). The short names
** avoid `bool`, which is a macro and would not survive token pasting. */
#define EW_FLOATS(M, X) \
  M(LT_FLOAT64, double, double, f64, X) M(LT_FLOAT32, float, float, f32, X) \
  M(LT_FLOAT16, lt_half, float, f16, X) M(LT_BFLOAT16, lt_bfloat16, float, bf16, X)
#define EW_INTS(M, X) \
  M(LT_INT64, int64_t, int64_t, i64, X) M(LT_INT32, int32_t, int32_t, i32, X) \
  M(LT_INT16, int16_t, int16_t, i16, X) M(LT_INT8, int8_t, int8_t, i8, X) \
  M(LT_UINT8, uint8_t, uint8_t, u8, X)
#define EW_BOOL(M, X) M(LT_BOOL, bool, bool, b8, X)
#define EW_ALL(M, X) EW_FLOATS(M, X) EW_INTS(M, X) EW_BOOL(M, X)
/* The complex dtypes, not in EW_ALL (see core/dtype.h): loops compute in C's
** _Complex types, whose layout is lt_complex64 / lt_complex128's, so the
** storage is read as them directly. Only ops written for complex list these. */
typedef float _Complex ew_cf;
typedef double _Complex ew_cd;
#define EW_COMPLEX(M, X) M(LT_COMPLEX64, ew_cf, ew_cf, c64, X) M(LT_COMPLEX128, ew_cd, ew_cd, c128, X)
_Static_assert(sizeof(ew_cf) == sizeof(lt_complex64) && sizeof(ew_cd) == sizeof(lt_complex128),
               "_Complex and the complex element structs must have one layout");

/* a table entry [ENUM] = OP_name for a loop table indexed by dtype */
#define EW_TBL(E, T, CT, N, OP) [E] = OP##_##N,

/* storage -> compute */
#define LD_f64(v) (v)
#define LD_f32(v) (v)
#define LD_f16(v) ew_h2f(v)
#define LD_bf16(v) lt_bf16_to_float(v)
#define LD_i64(v) (v)
#define LD_i32(v) (v)
#define LD_i16(v) (v)
#define LD_i8(v) (v)
#define LD_u8(v) (v)
#define LD_b8(v) (v)
#define LD_c64(v) (v)
#define LD_c128(v) (v)
/* compute -> storage (same category; cross-category casts live in ew_cast.c) */
#define ST_f64(v) ((double)(v))
#define ST_f32(v) ((float)(v))
#define ST_f16(v) ew_f2h((float)(v))
#define ST_bf16(v) lt_float_to_bf16((float)(v))
#define ST_i64(v) ((int64_t)(v))
#define ST_i32(v) ((int32_t)(v))
#define ST_i16(v) ((int16_t)(v))
#define ST_i8(v) ((int8_t)(v))
#define ST_u8(v) ((uint8_t)(v))
#define ST_b8(v) ((bool)(v))
#define ST_c64(v) ((ew_cf)(v))
#define ST_c128(v) ((ew_cd)(v))
/* bool output of a predicate */
#define ST_BOOL(v) ((bool)(v))
#define LD_BOOL(v) (v)

/* Which 16-bit float a load or store converts: 1 float16, 2 bfloat16, 0 none.
** The templates below paste the LDI / STO argument onto EW_HK_ (it is not
** expanded first), so a loop over 16-bit floats knows it at compile time and
** takes the block path: convert EW_HB elements to float32 with cvt.h's vector
** code, run the float expression on them, convert the block back.
** float16 takes it: GCC 12 does not vectorise _Float16 conversions, so the
** element loop converted one value per instruction (6x slower than float32).
** bfloat16 does not: its load is a shift and its rounding integer arithmetic,
** which the compiler vectorises inside the element loop, and that measured
** faster than the block path (16M add 8.0-8.7 ms inline against 10.6 ms in
** blocks, 1 thread, Xeon AVX-512); the values are the same either way. */
#define EW_HK_LD_f64 0
#define EW_HK_LD_f32 0
#define EW_HK_LD_f16 1
#define EW_HK_LD_bf16 0
#define EW_HK_LD_i64 0
#define EW_HK_LD_i32 0
#define EW_HK_LD_i16 0
#define EW_HK_LD_i8 0
#define EW_HK_LD_u8 0
#define EW_HK_LD_b8 0
#define EW_HK_LD_c64 0
#define EW_HK_LD_c128 0
#define EW_HK_ST_f64 0
#define EW_HK_ST_f32 0
#define EW_HK_ST_f16 1
#define EW_HK_ST_bf16 2
#define EW_HK_ST_i64 0
#define EW_HK_ST_i32 0
#define EW_HK_ST_i16 0
#define EW_HK_ST_i8 0
#define EW_HK_ST_u8 0
#define EW_HK_ST_b8 0
#define EW_HK_ST_c64 0
#define EW_HK_ST_c128 0
#define EW_HK_ST_BOOL 0
#define EW_HB 256

/* the block path's store: a converted float32 block, or the element store */
#define EW_HSTORE(STO, LOADS, ...) \
  if (EW_HK_##STO) { \
    float ro_[EW_HB]; \
    EW_IVDEP for (int64_t j_ = 0; j_ < m_; j_++) { LOADS ro_[j_] = (float)(__VA_ARGS__); } \
    lt_cvt_f32_to_half(EW_HK_##STO, (uint16_t *)(void *)(o_ + b_), ro_, m_); \
  } else { \
    EW_IVDEP for (int64_t j_ = 0; j_ < m_; j_++) { LOADS o_[b_ + j_] = STO(__VA_ARGS__); } \
  }
/* an input block: converted when strided, the broadcast value filled once when not */
#define EW_HIN(LDI, buf, p, st) \
  if (st) lt_cvt_half_to_f32(EW_HK_##LDI, buf, (const uint16_t *)(const void *)((p) + b_), m_);
/* before the blocks: a broadcast input (stride 0) fills its buffer once */
#define EW_HFILL(LDI, buf, p, st) \
  if (!(st)) { float v_ = (float)LDI((p)[0]); for (int j_ = 0; j_ < EW_HB; j_++) (buf)[j_] = v_; }

/* unsigned types in which integer arithmetic wraps instead of overflowing
** (signed overflow is undefined); at least int-wide so uint16*uint16 cannot
** overflow after integer promotion */
#define UT_i64 uint64_t
#define UT_i32 uint32_t
#define UT_i16 uint32_t
#define UT_i8 uint32_t
#define UT_u8 uint32_t
#define UT_b8 uint32_t
#define UT_f64 double
#define UT_f32 float
#define UT_f16 float
#define UT_bf16 float
#define UT_c64 ew_cf
#define UT_c128 ew_cd

/* true when CT is a floating type (folded at compile time) */
#define EW_ISFLT(CT) ((CT)0.5 != 0 && (CT)0.5 != 1)

/* Scalars of an op (alpha, min, ...) in both forms; a loop takes the one
** that fits its compute type. `err` is set by loops that find bad values
** (integer division by zero); they may run on several threads. */
typedef struct ew_ctx {
  double f[4];
  int64_t i[4];
  int mode;
  int err;
} ew_ctx;
#define EW_C(CT, k) (EW_ISFLT(CT) ? (CT)c_->f[k] : (CT)c_->i[k])
#define EW_SETERR(c) __atomic_store_n(&(c)->err, 1, __ATOMIC_RELAXED)
static inline void ew_ctx_set(ew_ctx *c, int k, lt_scalar s) {
  if (s.type == LT_SCALAR_FLOAT || s.type == LT_SCALAR_COMPLEX) {   /* complex: the real part (k + 1: the op's) */
    c->f[k] = s.v.f;
    /* the integer form only serves integer loops, which never get float scalars */
    c->i[k] = (s.v.f >= -9.2e18 && s.v.f <= 9.2e18) ? (int64_t)s.v.f : 0;
  } else {
    c->i[k] = s.v.i;
    c->f[k] = (double)s.v.i;
  }
}

#define EW_NODECL(CT) (void)0;
#define EW_CTXDECL(CT) ew_ctx *c_ = (ew_ctx *)ctx_; (void)c_;

#define EW_IVDEP _Pragma("GCC ivdep")

/* sign tests that also compile for unsigned types without -Wtype-limits noise */
static inline bool ew_lt0(int64_t v) { return v < 0; }
static inline bool ew_eqm1(int64_t v) { return v == -1; }
#define EW_LT0(v) ew_lt0((int64_t)(v))
#define EW_EQM1(v) ew_eqm1((int64_t)(v))

/*
** o = EXPR(x) with x the input in compute type CT. IT/OT: input and output
** storage types; LDI/STO: their conversions; DECL(CT): declarations run once
** per call (scalars from the context).
*/
#define EW_UNARY(FN, IT, CT, LDI, OT, STO, DECL, ...) \
static void FN(char **d_, const int64_t *s_, int64_t n_, void *ctx_) { \
  (void)ctx_; DECL(CT) \
  const int64_t so_ = s_[0], sa_ = s_[1]; \
  if (EW_HK_##LDI && so_ == (int64_t)sizeof(OT) && sa_ == (int64_t)sizeof(IT)) { \
    OT *o_ = (OT *)d_[0]; const IT *a_ = (const IT *)d_[1]; \
    float xa_[EW_HB]; \
    for (int64_t b_ = 0; b_ < n_; b_ += EW_HB) { \
      int64_t m_ = n_ - b_ < EW_HB ? n_ - b_ : EW_HB; \
      EW_HIN(LDI, xa_, a_, 1) \
      EW_HSTORE(STO, CT x = (CT)xa_[j_];, __VA_ARGS__) \
    } \
  } else if (so_ == (int64_t)sizeof(OT) && sa_ == (int64_t)sizeof(IT)) { \
    OT *o_ = (OT *)d_[0]; const IT *a_ = (const IT *)d_[1]; \
    EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) { CT x = LDI(a_[i_]); o_[i_] = STO(__VA_ARGS__); } \
  } else { \
    char *o_ = d_[0]; const char *a_ = d_[1]; \
    for (int64_t i_ = 0; i_ < n_; i_++) { \
      CT x = LDI(*(const IT *)(a_ + i_ * sa_)); *(OT *)(o_ + i_ * so_) = STO(__VA_ARGS__); } \
  } \
}

/* o = EXPR(x, y) */
#define EW_BINARY(FN, IT, CT, LDI, OT, STO, DECL, ...) \
static void FN(char **d_, const int64_t *s_, int64_t n_, void *ctx_) { \
  (void)ctx_; DECL(CT) \
  const int64_t so_ = s_[0], sa_ = s_[1], sb_ = s_[2], ei_ = (int64_t)sizeof(IT); \
  if (EW_HK_##LDI && so_ == (int64_t)sizeof(OT) && (sa_ == ei_ || sa_ == 0) && (sb_ == ei_ || sb_ == 0)) { \
    OT *o_ = (OT *)d_[0]; const IT *a_ = (const IT *)d_[1], *bb_ = (const IT *)d_[2]; \
    float xa_[EW_HB], xb_[EW_HB]; \
    EW_HFILL(LDI, xa_, a_, sa_) EW_HFILL(LDI, xb_, bb_, sb_) \
    for (int64_t b_ = 0; b_ < n_; b_ += EW_HB) { \
      int64_t m_ = n_ - b_ < EW_HB ? n_ - b_ : EW_HB; \
      EW_HIN(LDI, xa_, a_, sa_) EW_HIN(LDI, xb_, bb_, sb_) \
      EW_HSTORE(STO, CT x = (CT)xa_[j_]; CT y = (CT)xb_[j_];, __VA_ARGS__) \
    } \
    return; \
  } \
  if (so_ == (int64_t)sizeof(OT)) { \
    OT *o_ = (OT *)d_[0]; const IT *a_ = (const IT *)d_[1], *b_ = (const IT *)d_[2]; \
    if (sa_ == ei_ && sb_ == ei_) { \
      EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) { \
        CT x = LDI(a_[i_]), y = LDI(b_[i_]); o_[i_] = STO(__VA_ARGS__); } \
      return; \
    } \
    if (sa_ == ei_ && sb_ == 0) { \
      const CT y = LDI(b_[0]); \
      EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) { CT x = LDI(a_[i_]); o_[i_] = STO(__VA_ARGS__); } \
      return; \
    } \
    if (sa_ == 0 && sb_ == ei_) { \
      const CT x = LDI(a_[0]); \
      EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) { CT y = LDI(b_[i_]); o_[i_] = STO(__VA_ARGS__); } \
      return; \
    } \
  } \
  char *o_ = d_[0]; const char *a_ = d_[1], *b_ = d_[2]; \
  for (int64_t i_ = 0; i_ < n_; i_++) { \
    CT x = LDI(*(const IT *)(a_ + i_ * sa_)), y = LDI(*(const IT *)(b_ + i_ * sb_)); \
    *(OT *)(o_ + i_ * so_) = STO(__VA_ARGS__); \
  } \
}

/* o = EXPR(x, y, z); the runs where y and z are broadcast scalars (clamp,
** lerp with a number weight, addcmul with ...) get their own loops */
#define EW_TERNARY(FN, IT, CT, LDI, OT, STO, DECL, ...) \
static void FN(char **d_, const int64_t *s_, int64_t n_, void *ctx_) { \
  (void)ctx_; DECL(CT) \
  const int64_t so_ = s_[0], sa_ = s_[1], sb_ = s_[2], sc_ = s_[3], ei_ = (int64_t)sizeof(IT); \
  if (EW_HK_##LDI && so_ == (int64_t)sizeof(OT) && (sa_ == ei_ || sa_ == 0) && (sb_ == ei_ || sb_ == 0) && \
      (sc_ == ei_ || sc_ == 0)) { \
    OT *o_ = (OT *)d_[0]; const IT *a_ = (const IT *)d_[1], *bb_ = (const IT *)d_[2], *c3_ = (const IT *)d_[3]; \
    float xa_[EW_HB], xb_[EW_HB], xc_[EW_HB]; \
    EW_HFILL(LDI, xa_, a_, sa_) EW_HFILL(LDI, xb_, bb_, sb_) EW_HFILL(LDI, xc_, c3_, sc_) \
    for (int64_t b_ = 0; b_ < n_; b_ += EW_HB) { \
      int64_t m_ = n_ - b_ < EW_HB ? n_ - b_ : EW_HB; \
      EW_HIN(LDI, xa_, a_, sa_) EW_HIN(LDI, xb_, bb_, sb_) EW_HIN(LDI, xc_, c3_, sc_) \
      EW_HSTORE(STO, CT x = (CT)xa_[j_]; CT y = (CT)xb_[j_]; CT z = (CT)xc_[j_];, __VA_ARGS__) \
    } \
    return; \
  } \
  if (so_ == (int64_t)sizeof(OT) && sa_ == ei_) { \
    OT *o_ = (OT *)d_[0]; const IT *a_ = (const IT *)d_[1], *b_ = (const IT *)d_[2], *c3_ = (const IT *)d_[3]; \
    if (sb_ == ei_ && sc_ == ei_) { \
      EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) { \
        CT x = LDI(a_[i_]), y = LDI(b_[i_]), z = LDI(c3_[i_]); o_[i_] = STO(__VA_ARGS__); } \
      return; \
    } \
    if (sb_ == ei_ && sc_ == 0) { \
      const CT z = LDI(c3_[0]); \
      EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) { \
        CT x = LDI(a_[i_]), y = LDI(b_[i_]); o_[i_] = STO(__VA_ARGS__); } \
      return; \
    } \
    if (sb_ == 0 && sc_ == 0) { \
      const CT y = LDI(b_[0]), z = LDI(c3_[0]); \
      EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) { CT x = LDI(a_[i_]); o_[i_] = STO(__VA_ARGS__); } \
      return; \
    } \
  } \
  char *o_ = d_[0]; const char *a_ = d_[1], *b_ = d_[2], *c3_ = d_[3]; \
  for (int64_t i_ = 0; i_ < n_; i_++) { \
    CT x = LDI(*(const IT *)(a_ + i_ * sa_)), y = LDI(*(const IT *)(b_ + i_ * sb_)), \
       z = LDI(*(const IT *)(c3_ + i_ * sc_)); \
    *(OT *)(o_ + i_ * so_) = STO(__VA_ARGS__); \
  } \
}

/* ---- shared helpers of the op files ---- */

/* the loop for dtype dt from tbl, or NULL with "op: not implemented for X tensors" */
lt_ew_loop lt_ew_pick(const char *op, const lt_ew_loop *tbl, lt_dtype dt);

/* nonzero when t is a number: a wrapped Lua number or any 1-element tensor */
static inline bool ew_is_scalar(const lt_tensor *t) { return t->numel == 1; }

/* erf for float32 GELU and its derivative (ew_unary.c, nn_act.c) as x * P(x^2) / Q(x^2)
** on [-4, 4] (beyond, erf is 1 in float32): a rational fit (tools/erf_fit.py prints how it
** was made), max abs error 3.4e-7 in float32, as PyTorch's own vectorised erf (1.5e-7). It
** vectorises inline, where libmvec's erff is a call that cost twice GELU's whole loop
** (bench/README.md, "CPU training speed"). A NaN passes the clamps (comparisons with it
** are false). */
static inline float erf_rat_f(float x) {
  float c = x < -4.0f ? -4.0f : x > 4.0f ? 4.0f : x, t = c * c;
  float p = (((((-1.369502334e-08f * t + 4.787317655e-06f) * t + 3.828986325e-04f) * t + 3.837558270e-03f) * t +
              5.432957884e-02f) * t + 1.846421808e-01f) * t + 1.128379183e+00f;
  float q = ((((6.407477198e-05f * t + 1.309462839e-03f) * t + 1.545025474e-02f) * t + 1.138034655e-01f) * t +
             4.969684267e-01f) * t + 1.0f;
  float r = c * p / q;
  return r > 1.0f ? 1.0f : r < -1.0f ? -1.0f : r;
}
#define GELU_ERF(v) _Generic((v), float: erf_rat_f(v), default: erf(v))

#endif
