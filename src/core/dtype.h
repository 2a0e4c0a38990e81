/*
** dtype.h — element types, their traits, and PyTorch's promotion rules.
** Half and bfloat16 are stored as uint16_t and computed in float. The two
** complex dtypes are interleaved (re, im) pairs, numbered after every real
** dtype and kept out of LT_FORALL_DTYPES (see LT_FORALL_COMPLEX).
*/
#ifndef LT_DTYPE_H
#define LT_DTYPE_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

typedef uint16_t lt_half;
typedef uint16_t lt_bfloat16;

/* Complex elements: the layout of C99's float _Complex / double _Complex, of
** numpy's complex64 / complex128 and of BLAS's c and z routines. A struct, not
** _Complex, so that the CUDA kernels (C++) can include this header. */
typedef struct lt_complex64 { float re, im; } lt_complex64;
typedef struct lt_complex128 { double re, im; } lt_complex128;

/*
** X-macro over every dtype: _(ENUM, C storage type, C compute type, name).
** Kernels instantiate one loop per dtype from it; the compute type is what
** arithmetic happens in (float for the 16-bit floats).
*/
#define LT_FORALL_DTYPES(_) \
  _(LT_FLOAT64, double, double, float64) \
  _(LT_FLOAT32, float, float, float32) \
  _(LT_FLOAT16, lt_half, float, float16) \
  _(LT_BFLOAT16, lt_bfloat16, float, bfloat16) \
  _(LT_INT64, int64_t, int64_t, int64) \
  _(LT_INT32, int32_t, int32_t, int32) \
  _(LT_INT16, int16_t, int16_t, int16) \
  _(LT_INT8, int8_t, int8_t, int8) \
  _(LT_UINT8, uint8_t, uint8_t, uint8) \
  _(LT_BOOL, bool, bool, bool)

/* The same list again, for nesting one expansion inside another (the
** preprocessor will not re-expand a macro inside its own expansion). */
#define LT_FORALL_DTYPES_INNER(_) \
  _(LT_FLOAT64, double, double, float64) \
  _(LT_FLOAT32, float, float, float32) \
  _(LT_FLOAT16, lt_half, float, float16) \
  _(LT_BFLOAT16, lt_bfloat16, float, bfloat16) \
  _(LT_INT64, int64_t, int64_t, int64) \
  _(LT_INT32, int32_t, int32_t, int32) \
  _(LT_INT16, int16_t, int16_t, int16) \
  _(LT_INT8, int8_t, int8_t, int8) \
  _(LT_UINT8, uint8_t, uint8_t, uint8) \
  _(LT_BOOL, bool, bool, bool)

/*
** The complex dtypes, _(ENUM, storage type, compute type, name). They are not
** in LT_FORALL_DTYPES on purpose: kernels instantiated from that list (order,
** min/max, casts to integers, bit ops) have no meaning for complex numbers or
** a different one, so a kernel meets complex only where it was written for it.
** Their enum values come after every real dtype; tables indexed by dtype have
** LT_NUM_DTYPES entries, so a complex dtype reads a NULL entry there (the
** kernel's "not implemented" error), never past the end. The generated entry
** points refuse complex tensors for ops not declared `complex = true`
** (src/ops/README.md), before any kernel runs.
*/
#define LT_FORALL_COMPLEX(_) \
  _(LT_COMPLEX64, lt_complex64, lt_complex64, complex64) \
  _(LT_COMPLEX128, lt_complex128, lt_complex128, complex128)

/* The one list: the enum comes from it; the second copy above (needed for
** nesting) is checked against it entry by entry, and tables indexed by dtype
** use designated initializers (dtype.c), so nothing depends on keeping
** several lists in the same order by hand. */
#define LT_DTYPE_ENUM_(E, ST, CT, N) E,
typedef enum lt_dtype {
  LT_FORALL_DTYPES(LT_DTYPE_ENUM_) LT_FORALL_COMPLEX(LT_DTYPE_ENUM_) LT_NUM_DTYPES
} lt_dtype;
#undef LT_DTYPE_ENUM_

#define LT_DTYPE_NONE (-1)

#define LT_DTYPE_POS_(E, ST, CT, N) LT_DTYPE_POS_##N,
enum { LT_FORALL_DTYPES_INNER(LT_DTYPE_POS_) LT_DTYPE_POS_COUNT_ };
#undef LT_DTYPE_POS_
#define LT_DTYPE_SAME_(E, ST, CT, N) \
  _Static_assert((int)E == (int)LT_DTYPE_POS_##N, "LT_FORALL_DTYPES_INNER differs from LT_FORALL_DTYPES at " #N);
LT_FORALL_DTYPES(LT_DTYPE_SAME_)
#undef LT_DTYPE_SAME_
_Static_assert((int)LT_DTYPE_POS_COUNT_ == (int)LT_COMPLEX64, "LT_FORALL_DTYPES_INNER has another length");
/* the real dtypes are 0 .. LT_NUM_REAL_DTYPES-1, the complex ones after them */
#define LT_NUM_REAL_DTYPES ((int)LT_COMPLEX64)

typedef struct lt_dtype_traits {
  const char *name;      /* "float32" */
  const char *t7name;    /* Torch7 class stem: "Float" (FloatTensor) */
  size_t size;           /* bytes per element */
  bool is_float;         /* real floating point (false for complex, as PyTorch) */
  bool is_signed;
  bool is_complex;
} lt_dtype_traits;

extern const lt_dtype_traits lt_dtype_traits_table[LT_NUM_DTYPES];

static inline size_t lt_dtype_size(lt_dtype t) { return lt_dtype_traits_table[t].size; }
static inline const char *lt_dtype_name(lt_dtype t) { return lt_dtype_traits_table[t].name; }
static inline bool lt_dtype_is_float(lt_dtype t) { return lt_dtype_traits_table[t].is_float; }
static inline bool lt_dtype_is_complex(lt_dtype t) { return t >= LT_COMPLEX64 && t < LT_NUM_DTYPES; }
static inline bool lt_dtype_is_integral(lt_dtype t) {  /* bool included */
  return !lt_dtype_traits_table[t].is_float && !lt_dtype_is_complex(t);
}
/* complex64 <-> float32, complex128 <-> float64 (other dtypes map to themselves,
** the 16-bit floats to complex64) */
static inline lt_dtype lt_dtype_to_real(lt_dtype t) {
  return t == LT_COMPLEX64 ? LT_FLOAT32 : t == LT_COMPLEX128 ? LT_FLOAT64 : t;
}
static inline lt_dtype lt_dtype_to_complex(lt_dtype t) {
  return t == LT_FLOAT64 ? LT_COMPLEX128 : lt_dtype_is_complex(t) ? t : LT_COMPLEX64;
}

/* name ("float32", "float", "double", "half", "long", "int", ...) -> dtype, or -1 */
int lt_dtype_from_name(const char *name);

/* PyTorch's promote_types: the smallest type both convert to safely. */
lt_dtype lt_promote_types(lt_dtype a, lt_dtype b);

/* default floating dtype (torch.set_default_dtype); process-wide */
lt_dtype lt_get_default_dtype(void);
int lt_set_default_dtype(lt_dtype t);   /* only float types; -1 + error otherwise */

/* half / bfloat16 <-> float, round to nearest even */
float lt_half_to_float(lt_half h);
lt_half lt_float_to_half(float f);
static inline float lt_bf16_to_float(lt_bfloat16 b) {
  union { uint32_t u; float f; } v; v.u = (uint32_t)b << 16; return v.f;
}
static inline lt_bfloat16 lt_float_to_bf16(float f) {
  union { uint32_t u; float f; } v; v.f = f;
  if ((v.u & 0x7fffffffu) > 0x7f800000u) return (lt_bfloat16)((v.u >> 16) | 0x40); /* quiet NaN */
  uint32_t rounding = 0x7fffu + ((v.u >> 16) & 1u);
  return (lt_bfloat16)((v.u + rounding) >> 16);
}

/*
** Storage <-> compute conversions by dtype name, for kernels instantiated with
** LT_FORALL_DTYPES: `CT x = LT_TOC_##NAME(p[i]); p[i] = LT_FROMC_##NAME(x);`.
*/
#define LT_TOC_float64(v) (v)
#define LT_TOC_float32(v) (v)
#define LT_TOC_float16(v) lt_half_to_float(v)
#define LT_TOC_bfloat16(v) lt_bf16_to_float(v)
#define LT_TOC_int64(v) (v)
#define LT_TOC_int32(v) (v)
#define LT_TOC_int16(v) (v)
#define LT_TOC_int8(v) (v)
#define LT_TOC_uint8(v) (v)
#define LT_TOC_bool(v) (v)
#define LT_FROMC_float64(v) (double)(v)
#define LT_FROMC_float32(v) (float)(v)
#define LT_FROMC_float16(v) lt_float_to_half((float)(v))
#define LT_FROMC_bfloat16(v) lt_float_to_bf16((float)(v))
#define LT_FROMC_int64(v) (int64_t)(v)
#define LT_FROMC_int32(v) (int32_t)(v)
#define LT_FROMC_int16(v) (int16_t)(v)
#define LT_FROMC_int8(v) (int8_t)(v)
#define LT_FROMC_uint8(v) (uint8_t)(v)
#define LT_FROMC_bool(v) (bool)(v)

/* `bool` is a macro for _Bool, so a name argument that is expanded before
** pasting arrives as _Bool */
#define LT_TOC__Bool(v) LT_TOC_bool(v)
#define LT_FROMC__Bool(v) LT_FROMC_bool(v)

/* Read/write one element of any dtype through double (slow path: printing,
** item, fill). A complex element reads as its real part and is written as
** v + 0j; the _complex forms carry both parts (a real dtype reads im = 0 and
** stores the real part). */
double lt_dtype_load_double(lt_dtype t, const void *p);
void lt_dtype_load_complex(lt_dtype t, const void *p, double *re, double *im);
void lt_dtype_store_complex(lt_dtype t, void *p, double re, double im);
int64_t lt_dtype_load_int64(lt_dtype t, const void *p);
void lt_dtype_store_double(lt_dtype t, void *p, double v);
void lt_dtype_store_int64(lt_dtype t, void *p, int64_t v);

#endif
