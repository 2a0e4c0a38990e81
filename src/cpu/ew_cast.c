/*
** ew_cast.c — the dtype conversion loops behind copy_, to(), clone_as and
** the elementwise driver: one loop per (destination, source) pair.
**
** Float -> integer goes through a saturating conversion to int64 (NaN -> 0)
** and then wraps to narrower types, which is what PyTorch does on x86 in the
** common cases without C's undefined behaviour for out-of-range values.
*/
#include "cpu/ew.h"
#include "cpu/cvt.h"

static inline int64_t sat_i64_d(double x) {
  return x != x ? 0 : x <= -9223372036854775808.0 ? INT64_MIN
       : x >= 9223372036854775808.0 ? INT64_MAX : (int64_t)x;
}
static inline int64_t sat_i64_f(float x) {
  return x != x ? 0 : x <= -9223372036854775808.0f ? INT64_MIN
       : x >= 9223372036854775808.0f ? INT64_MAX : (int64_t)x;
}
/* narrow integer destinations from floats: in range, a direct conversion
** (which vectorises); out of range, the saturated int64 wrapped */
static inline int32_t sat_i32_f(float x) {
  return (x > -2147483648.0f && x < 2147483648.0f) ? (int32_t)x : (int32_t)sat_i64_f(x);
}
static inline int32_t sat_i32_d(double x) {
  return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : (int32_t)sat_i64_d(x);
}
#define TO_I64(x) _Generic((x), double: sat_i64_d, float: sat_i64_f, default: ew_id_i64)(x)
#define TO_I32(x) _Generic((x), double: sat_i32_d, float: sat_i32_f, default: ew_id_i32)(x)
static inline int64_t ew_id_i64(int64_t x) { return x; }
static inline int32_t ew_id_i32(int64_t x) { return (int32_t)x; }

#define CV_f64(x) ((double)(x))
#define CV_f32(x) ((float)(x))
#define CV_f16(x) ew_f2h((float)(x))
#define CV_bf16(x) lt_float_to_bf16((float)(x))
#define CV_i64(x) TO_I64(x)
#define CV_i32(x) TO_I32(x)
#define CV_i16(x) ((int16_t)TO_I32(x))
#define CV_i8(x) ((int8_t)TO_I32(x))
#define CV_u8(x) ((uint8_t)TO_I32(x))
#define CV_b8(x) ((x) != 0)

#define TY_f64 double
#define TY_f32 float
#define TY_f16 lt_half
#define TY_bf16 lt_bfloat16
#define TY_i64 int64_t
#define TY_i32 int32_t
#define TY_i16 int16_t
#define TY_i8 int8_t
#define TY_u8 uint8_t
#define TY_b8 bool

/* a second copy of the dtype list for the nested expansion */
#define EW_ALL_B(M, X) \
  M(LT_FLOAT64, double, double, f64, X) M(LT_FLOAT32, float, float, f32, X) \
  M(LT_FLOAT16, lt_half, float, f16, X) M(LT_BFLOAT16, lt_bfloat16, float, bf16, X) \
  M(LT_INT64, int64_t, int64_t, i64, X) M(LT_INT32, int32_t, int32_t, i32, X) \
  M(LT_INT16, int16_t, int16_t, i16, X) M(LT_INT8, int8_t, int8_t, i8, X) \
  M(LT_UINT8, uint8_t, uint8_t, u8, X) M(LT_BOOL, bool, bool, b8, X)

#define CAST_PAIR(SE, ST, SCT, SN, DN) \
static void cast_##DN##_##SN(char **d_, const int64_t *s_, int64_t n_, void *ctx_) { \
  (void)ctx_; \
  typedef TY_##DN DT_; \
  const int64_t so_ = s_[0], sa_ = s_[1]; \
  if (so_ == (int64_t)sizeof(DT_) && sa_ == (int64_t)sizeof(ST)) { \
    DT_ *o_ = (DT_ *)d_[0]; const ST *a_ = (const ST *)d_[1]; \
    EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) { SCT x = LD_##SN(a_[i_]); o_[i_] = CV_##DN(x); } \
  } else if (so_ == (int64_t)sizeof(DT_) && sa_ == 0) { \
    DT_ *o_ = (DT_ *)d_[0]; SCT x = LD_##SN(*(const ST *)d_[1]); const DT_ v_ = CV_##DN(x); \
    EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) o_[i_] = v_; \
  } else { \
    char *o_ = d_[0]; const char *a_ = d_[1]; \
    for (int64_t i_ = 0; i_ < n_; i_++) { \
      SCT x = LD_##SN(*(const ST *)(a_ + i_ * sa_)); *(DT_ *)(o_ + i_ * so_) = CV_##DN(x); } \
  } \
}
#define CAST_DST(DE, DT, DCT, DN, X) EW_ALL_B(CAST_PAIR, DN)
EW_ALL(CAST_DST, _)

/* Complex: a real source becomes re + 0j; a complex source gives its real
** part to a real destination (copy_ and to() refuse that before it gets here,
** as it loses the imaginary part; the elementwise driver never asks for it);
** complex64 <-> complex128 converts both parts. */
#define TY_c64 lt_complex64
#define TY_c128 lt_complex128
#define RT_c64 float
#define RT_c128 double
#define EW_CX(M, X) M(LT_COMPLEX64, lt_complex64, lt_complex64, c64, X) M(LT_COMPLEX128, lt_complex128, lt_complex128, c128, X)

/* the strided walk shared by every complex cast: o = CONV(a) element by element */
#define CX_CAST_LOOP(NAME, DT, ST, CONV) \
static void NAME(char **d_, const int64_t *s_, int64_t n_, void *ctx_) { \
  (void)ctx_; \
  const int64_t so_ = s_[0], sa_ = s_[1]; \
  char *o_ = d_[0]; const char *a_ = d_[1]; \
  for (int64_t i_ = 0; i_ < n_; i_++) { \
    const ST *a = (const ST *)(a_ + i_ * sa_); DT *o = (DT *)(o_ + i_ * so_); CONV; } \
}
#define CX_FROM_REAL(SE, ST, SCT, SN, DN) \
  CX_CAST_LOOP(cast_##DN##_##SN, TY_##DN, ST, o->re = (RT_##DN)LD_##SN(*a); o->im = 0)
#define CX_TO_REAL(DE, DT, DCT, DN, SN) \
  CX_CAST_LOOP(cast_##DN##_##SN, DT, TY_##SN, *o = CV_##DN(a->re))
EW_ALL(CX_FROM_REAL, c64) EW_ALL(CX_FROM_REAL, c128)
EW_ALL(CX_TO_REAL, c64) EW_ALL(CX_TO_REAL, c128)
CX_CAST_LOOP(cast_c64_c128, lt_complex64, lt_complex128, o->re = (float)a->re; o->im = (float)a->im)
CX_CAST_LOOP(cast_c128_c64, lt_complex128, lt_complex64, o->re = a->re; o->im = a->im)

/* same-dtype copies move bytes: one loop per element size */
#define COPY_SIZE(NAME, T) \
static void NAME(char **d_, const int64_t *s_, int64_t n_, void *ctx_) { \
  (void)ctx_; \
  const int64_t so_ = s_[0], sa_ = s_[1]; \
  if (so_ == (int64_t)sizeof(T) && sa_ == (int64_t)sizeof(T)) { memmove(d_[0], d_[1], (size_t)n_ * sizeof(T)); return; } \
  if (so_ == (int64_t)sizeof(T) && sa_ == 0) { \
    T *o_ = (T *)d_[0]; T v_; memcpy(&v_, d_[1], sizeof(T)); \
    for (int64_t i_ = 0; i_ < n_; i_++) o_[i_] = v_; \
    return; } \
  char *o_ = d_[0]; const char *a_ = d_[1]; \
  for (int64_t i_ = 0; i_ < n_; i_++) memcpy(o_ + i_ * so_, a_ + i_ * sa_, sizeof(T)); \
}
typedef struct { uint64_t lo, hi; } ew_bytes16;
COPY_SIZE(copy16, ew_bytes16)
COPY_SIZE(copy8, uint64_t)
COPY_SIZE(copy4, uint32_t)
COPY_SIZE(copy2, uint16_t)
COPY_SIZE(copy1, uint8_t)

#define CAST_ENTRY(SE, ST, SCT, SN, DN) [SE] = cast_##DN##_##SN,
#define CAST_ROW(DE, DT, DCT, DN, X) [DE] = { EW_ALL_B(CAST_ENTRY, DN) EW_CX(CAST_ENTRY, DN) },
/* (a complex row's own dtype is a byte copy, so it has no entry) */
static const lt_ew_loop cast_tbl[LT_NUM_DTYPES][LT_NUM_DTYPES] = {
  EW_ALL(CAST_ROW, _)
  [LT_COMPLEX64] = { EW_ALL_B(CAST_ENTRY, c64) [LT_COMPLEX128] = cast_c64_c128 },
  [LT_COMPLEX128] = { EW_ALL_B(CAST_ENTRY, c128) [LT_COMPLEX64] = cast_c128_c64 },
};

/* float32 <-> the 16-bit floats: contiguous runs through cvt.h's vector
** conversions, anything else through the element loops above */
#define CAST_FAST(DN, SN, FN, DT, ST) \
static void fast_##DN##_##SN(char **d_, const int64_t *s_, int64_t n_, void *ctx_) { \
  if (s_[0] == (int64_t)sizeof(DT) && s_[1] == (int64_t)sizeof(ST)) FN((DT *)d_[0], (const ST *)d_[1], n_); \
  else cast_##DN##_##SN(d_, s_, n_, ctx_); \
}
CAST_FAST(bf16, f32, lt_cvt_f32_to_bf16, uint16_t, float)
CAST_FAST(f16, f32, lt_cvt_f32_to_f16, uint16_t, float)
CAST_FAST(f32, bf16, lt_cvt_bf16_to_f32, float, uint16_t)
CAST_FAST(f32, f16, lt_cvt_f16_to_f32, float, uint16_t)

lt_ew_loop lt_cast_loop(lt_dtype dst, lt_dtype src) {
  if (dst == LT_FLOAT32 && src == LT_BFLOAT16) return fast_f32_bf16;
  if (dst == LT_FLOAT32 && src == LT_FLOAT16) return fast_f32_f16;
  if (dst == LT_BFLOAT16 && src == LT_FLOAT32) return fast_bf16_f32;
  if (dst == LT_FLOAT16 && src == LT_FLOAT32) return fast_f16_f32;
  if (dst == src) {
    switch (lt_dtype_size(dst)) {
      case 16: return copy16;
      case 8: return copy8;
      case 4: return copy4;
      case 2: return copy2;
      default: return copy1;
    }
  }
  return cast_tbl[dst][src];
}
