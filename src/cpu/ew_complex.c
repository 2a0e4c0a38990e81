/*
** ew_complex.c — the CPU kernels of the complex-only elementwise ops: conj,
** angle, sgn of complex, polar and complex (parts -> complex). Loops from
** ew.h's templates over C99 _Complex; the driver (iter.c) broadcasts,
** converts and handles out=.
*/
#include <tgmath.h>
#include "cpu/ew.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "meta/fft.h"      /* lt_meta_complex_parts: the checks of complex() and polar() */

/* conj: complex -> same dtype */
#define CONJ_DEF(E, T, CT, N, X) EW_UNARY(conj_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, conj(x))
EW_COMPLEX(CONJ_DEF, _)
static const lt_ew_loop conj_tbl[LT_NUM_DTYPES] = { EW_COMPLEX(EW_TBL, conj) };

/* sgn: z / |z|, 0 at 0 */
#define SGN_DEF(E, T, CT, N, X) EW_UNARY(sgn_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, \
  ({ __typeof__(fabs(x)) m_ = fabs(x); m_ == 0 ? (CT)0 : x / m_; }))
EW_COMPLEX(SGN_DEF, _)
static const lt_ew_loop sgn_tbl[LT_NUM_DTYPES] = { EW_COMPLEX(EW_TBL, sgn) };

/* angle: complex -> its real dtype (atan2(im, re)); a real x: 0 or pi, nan stays nan */
#define CANGLE(E, T, CT, N, RT, RN) EW_UNARY(angle_##N, T, CT, LD_##N, RT, ST_##RN, EW_NODECL, carg(x))
CANGLE(LT_COMPLEX64, ew_cf, ew_cf, c64, float, f32) CANGLE(LT_COMPLEX128, ew_cd, ew_cd, c128, double, f64)
#define RANGLE(E, T, CT, N, X) EW_UNARY(angle_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, \
  (x != x ? x : x < 0 ? (CT)3.14159265358979323846 : (CT)0))
EW_FLOATS(RANGLE, _)
static const lt_ew_loop angle_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, angle) EW_COMPLEX(EW_TBL, angle) };

/* two real parts -> complex: complex(re, im) and polar(abs, angle) */
#define PARTS(FN, RT, OT, EXPR) \
static void FN(char **d_, const int64_t *s_, int64_t n_, void *ctx_) { \
  (void)ctx_; \
  char *o_ = d_[0]; const char *a_ = d_[1], *b_ = d_[2]; \
  for (int64_t i_ = 0; i_ < n_; i_++) { \
    RT x = *(const RT *)(a_ + i_ * s_[1]), y = *(const RT *)(b_ + i_ * s_[2]); \
    *(OT *)(o_ + i_ * s_[0]) = (EXPR); } \
}
PARTS(complex_f32, float, ew_cf, CMPLXF(x, y))
PARTS(complex_f64, double, ew_cd, CMPLX(x, y))
/* polar: abs * (cos + i sin); an infinite abs at angle 0 gives inf + 0j, not inf*0 = nan */
PARTS(polar_f32, float, ew_cf, CMPLXF(x * cos(y), y == 0 ? 0.0f : x * sin(y)))
PARTS(polar_f64, double, ew_cd, CMPLX(x * cos(y), y == 0 ? 0.0 : x * sin(y)))

static lt_tensor *run(const char *op, int nin, lt_tensor *a, lt_tensor *b, lt_dtype in, lt_dtype odt,
                      lt_ew_loop fn, lt_tensor *out) {
  lt_ew e;
  e.op = op; e.nin = nin; e.in[0] = a; e.in[1] = b; e.in_dt[0] = e.in_dt[1] = in;
  e.out_dt = odt; e.fn = fn; e.ctx = NULL; e.grain = 0;
  return lt_ew_run(&e, out);
}

lt_tensor *lt_cpu_conj_physical(lt_tensor *self, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_complex(dt)) {   /* the conjugate of a real number is itself */
    if (!out) return lt_tensor_clone_as(self, dt);
    if (lt_tensor_resize_out("conj_physical", out, self->ndim, self->sizes) < 0 || lt_tensor_copy_(out, self) < 0)
      return NULL;
    lt_tensor_retain(out);
    return out;
  }
  return run("conj_physical", 1, self, NULL, dt, dt, conj_tbl[dt], out);
}

lt_tensor *lt_cpu__sgn_complex(lt_tensor *self) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_complex(dt)) return lt_error_null("sgn: expected a complex tensor, got %s", lt_dtype_name(dt));
  return run("sgn", 1, self, NULL, dt, dt, sgn_tbl[dt], NULL);
}

lt_tensor *lt_cpu_angle(lt_tensor *self, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_complex(dt) && !lt_dtype_is_float(dt)) dt = lt_get_default_dtype();   /* integers, bool */
  lt_ew_loop fn = lt_ew_pick("angle", angle_tbl, dt);
  if (!fn) return NULL;
  return run("angle", 1, self, NULL, dt, lt_dtype_to_real(dt), fn, out);
}

/* both parts float32 or both float64, as PyTorch asks */
static lt_tensor *from_parts(const char *op, const char *na, const char *nb, lt_tensor *a, lt_tensor *b,
                             lt_ew_loop f32, lt_ew_loop f64, lt_tensor *out) {
  if (lt_meta_complex_parts(op, na, nb, a, b) < 0) return NULL;
  lt_dtype da = (lt_dtype)a->dtype;
  return run(op, 2, a, b, da, lt_dtype_to_complex(da), da == LT_FLOAT32 ? f32 : f64, out);
}

lt_tensor *lt_cpu_complex(lt_tensor *real, lt_tensor *imag, lt_tensor *out) {
  return from_parts("complex", "real", "imag", real, imag, complex_f32, complex_f64, out);
}

lt_tensor *lt_cpu_polar(lt_tensor *magnitude, lt_tensor *phase, lt_tensor *out) {
  return from_parts("polar", "abs", "angle", magnitude, phase, polar_f32, polar_f64, out);
}
