/*
** dtype.c — dtype traits, names, promotion and 16-bit float conversion.
*/
#include <string.h>
#include <math.h>
#include "core/dtype.h"
#include "core/error.h"

/* by enum (designated), sizes from the storage types of the X-macro's list */
const lt_dtype_traits lt_dtype_traits_table[LT_NUM_DTYPES] = {
  [LT_FLOAT64] = {"float64", "Double", sizeof(double), true, true, false},
  [LT_FLOAT32] = {"float32", "Float", sizeof(float), true, true, false},
  [LT_FLOAT16] = {"float16", "Half", sizeof(lt_half), true, true, false},
  [LT_BFLOAT16] = {"bfloat16", "BFloat16", sizeof(lt_bfloat16), true, true, false},
  [LT_INT64] = {"int64", "Long", sizeof(int64_t), false, true, false},
  [LT_INT32] = {"int32", "Int", sizeof(int32_t), false, true, false},
  [LT_INT16] = {"int16", "Short", sizeof(int16_t), false, true, false},
  [LT_INT8] = {"int8", "Char", sizeof(int8_t), false, true, false},
  [LT_UINT8] = {"uint8", "Byte", sizeof(uint8_t), false, false, false},
  [LT_BOOL] = {"bool", "Bool", sizeof(bool), false, false, false},
  [LT_COMPLEX64] = {"complex64", "ComplexFloat", sizeof(lt_complex64), false, true, true},
  [LT_COMPLEX128] = {"complex128", "ComplexDouble", sizeof(lt_complex128), false, true, true},
};

static const struct { const char *name; lt_dtype t; } aliases[] = {
  {"float64", LT_FLOAT64}, {"double", LT_FLOAT64},
  {"float32", LT_FLOAT32}, {"float", LT_FLOAT32},
  {"float16", LT_FLOAT16}, {"half", LT_FLOAT16},
  {"bfloat16", LT_BFLOAT16},
  {"int64", LT_INT64}, {"long", LT_INT64},
  {"int32", LT_INT32}, {"int", LT_INT32},
  {"int16", LT_INT16}, {"short", LT_INT16},
  {"int8", LT_INT8}, {"char", LT_INT8},
  {"uint8", LT_UINT8}, {"byte", LT_UINT8},
  {"bool", LT_BOOL},
  {"complex64", LT_COMPLEX64}, {"cfloat", LT_COMPLEX64},
  {"complex128", LT_COMPLEX128}, {"cdouble", LT_COMPLEX128},
};

int lt_dtype_from_name(const char *name) {
  if (strncmp(name, "torch.", 6) == 0) name += 6;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(aliases[i].name, name) == 0) return (int)aliases[i].t;
  return LT_DTYPE_NONE;
}

/* rank inside a category; promotion picks the wider */
static int int_rank(lt_dtype t) {
  switch (t) {
    case LT_INT8: return 1; case LT_INT16: return 2;
    case LT_INT32: return 3; case LT_INT64: return 4; default: return 0;
  }
}

/* complex with anything: complex128 when either side holds a double (float64
** or complex128), complex64 otherwise, as PyTorch */
static lt_dtype promote_complex(lt_dtype a, lt_dtype b) {
  bool wide = a == LT_FLOAT64 || b == LT_FLOAT64 || a == LT_COMPLEX128 || b == LT_COMPLEX128;
  return wide ? LT_COMPLEX128 : LT_COMPLEX64;
}

lt_dtype lt_promote_types(lt_dtype a, lt_dtype b) {
  if (a == b) return a;
  if (lt_dtype_is_complex(a) || lt_dtype_is_complex(b)) return promote_complex(a, b);
  if (a == LT_BOOL) return b;
  if (b == LT_BOOL) return a;
  bool fa = lt_dtype_is_float(a), fb = lt_dtype_is_float(b);
  if (fa && fb) {
    if (a == LT_FLOAT64 || b == LT_FLOAT64) return LT_FLOAT64;
    return LT_FLOAT32;  /* f32 with a 16-bit float, or f16 with bf16 */
  }
  if (fa) return a;
  if (fb) return b;
  if (a == LT_UINT8 || b == LT_UINT8) {
    lt_dtype other = a == LT_UINT8 ? b : a;
    return other == LT_INT8 ? LT_INT16 : other;
  }
  return int_rank(a) >= int_rank(b) ? a : b;
}

static lt_dtype default_dtype = LT_FLOAT32;

lt_dtype lt_get_default_dtype(void) { return default_dtype; }

int lt_set_default_dtype(lt_dtype t) {
  if ((int)t < 0 || t >= LT_NUM_DTYPES || !lt_dtype_is_float(t))
    return lt_error("set_default_dtype: only floating dtypes can be the default");
  default_dtype = t;
  return 0;
}

float lt_half_to_float(lt_half h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0) {
    if (man == 0) bits = sign;
    else {  /* subnormal: renormalise */
      int e = -1;
      do { e++; man <<= 1; } while (!(man & 0x400u));
      bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
    }
  } else if (exp == 31) bits = sign | 0x7f800000u | man << 13;
  else bits = sign | (exp + 112) << 23 | man << 13;
  union { uint32_t u; float f; } v; v.u = bits; return v.f;
}

lt_half lt_float_to_half(float f) {
  union { uint32_t u; float f; } v; v.f = f;
  uint32_t u = v.u, sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (lt_half)(sign | 0x7e00u);           /* NaN */
  if (a >= 0x477ff000u) return (lt_half)(sign | 0x7c00u);          /* overflow -> inf */
  if (a < 0x38800000u) {                                           /* subnormal or zero */
    if (a < 0x33000000u) return (lt_half)sign;
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;                                      /* 14..24 */
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return (lt_half)(sign | r);
  }
  uint32_t r = a + 0xc8000fffu + ((a >> 13) & 1u);                 /* rebias -112<<23, round even */
  return (lt_half)(sign | (r >> 13));
}

double lt_dtype_load_double(lt_dtype t, const void *p) {
  switch (t) {
    case LT_FLOAT64: return *(const double *)p;
    case LT_FLOAT32: return *(const float *)p;
    case LT_FLOAT16: return lt_half_to_float(*(const lt_half *)p);
    case LT_BFLOAT16: return lt_bf16_to_float(*(const lt_bfloat16 *)p);
    case LT_INT64: return (double)*(const int64_t *)p;
    case LT_INT32: return *(const int32_t *)p;
    case LT_INT16: return *(const int16_t *)p;
    case LT_INT8: return *(const int8_t *)p;
    case LT_UINT8: return *(const uint8_t *)p;
    case LT_BOOL: return *(const bool *)p;
    case LT_COMPLEX64: return ((const lt_complex64 *)p)->re;
    case LT_COMPLEX128: return ((const lt_complex128 *)p)->re;
    default: return 0;
  }
}

void lt_dtype_load_complex(lt_dtype t, const void *p, double *re, double *im) {
  switch (t) {
    case LT_COMPLEX64: *re = ((const lt_complex64 *)p)->re; *im = ((const lt_complex64 *)p)->im; break;
    case LT_COMPLEX128: *re = ((const lt_complex128 *)p)->re; *im = ((const lt_complex128 *)p)->im; break;
    default: *re = lt_dtype_load_double(t, p); *im = 0; break;
  }
}

void lt_dtype_store_complex(lt_dtype t, void *p, double re, double im) {
  switch (t) {
    case LT_COMPLEX64: ((lt_complex64 *)p)->re = (float)re; ((lt_complex64 *)p)->im = (float)im; break;
    case LT_COMPLEX128: ((lt_complex128 *)p)->re = re; ((lt_complex128 *)p)->im = im; break;
    default: lt_dtype_store_double(t, p, re); break;
  }
}

int64_t lt_dtype_load_int64(lt_dtype t, const void *p) {
  switch (t) {
    case LT_INT64: return *(const int64_t *)p;
    case LT_INT32: return *(const int32_t *)p;
    case LT_INT16: return *(const int16_t *)p;
    case LT_INT8: return *(const int8_t *)p;
    case LT_UINT8: return *(const uint8_t *)p;
    case LT_BOOL: return *(const bool *)p;
    default: {
      double d = lt_dtype_load_double(t, p);
      if (!(d > -9.3e18 && d < 9.3e18)) return d > 0 ? INT64_MAX : INT64_MIN;
      return (int64_t)d;
    }
  }
}

/* float -> int conversions of out-of-range values are UB in C; saturate instead */
static int64_t sat_i64(double v) {
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)v;
}

void lt_dtype_store_double(lt_dtype t, void *p, double v) {
  switch (t) {
    case LT_FLOAT64: *(double *)p = v; break;
    case LT_FLOAT32: *(float *)p = (float)v; break;
    case LT_FLOAT16: *(lt_half *)p = lt_float_to_half((float)v); break;
    case LT_BFLOAT16: *(lt_bfloat16 *)p = lt_float_to_bf16((float)v); break;
    case LT_BOOL: *(bool *)p = v != 0; break;
    case LT_COMPLEX64: case LT_COMPLEX128: lt_dtype_store_complex(t, p, v, 0); break;
    default: lt_dtype_store_int64(t, p, sat_i64(v)); break;
  }
}

void lt_dtype_store_int64(lt_dtype t, void *p, int64_t v) {
  switch (t) {
    case LT_INT64: *(int64_t *)p = v; break;
    case LT_INT32: *(int32_t *)p = (int32_t)(uint32_t)v; break;   /* wraps like PyTorch */
    case LT_INT16: *(int16_t *)p = (int16_t)(uint16_t)v; break;
    case LT_INT8: *(int8_t *)p = (int8_t)(uint8_t)v; break;
    case LT_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case LT_BOOL: *(bool *)p = v != 0; break;
    default: lt_dtype_store_double(t, p, (double)v); break;
  }
}
