/*
** ew_hyperbolic.c — the CPU kernels of asinh, acosh and atanh, for the
** floating dtypes and the complex ones. The loops call <tgmath.h>, which picks
** casinh, cacosh, catanh for complex: C99's Annex G branch cuts, PyTorch's
** too (its CPU kernels call std::asinh & co. of std::complex, the same glibc
** functions). Integer and bool inputs compute in the default float dtype.
*/
#include <tgmath.h>
#include "cpu/ew.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */

#define AH_DEF(E, T, CT, N, OP) EW_UNARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, OP(x))
#define AH_OP(OP) EW_FLOATS(AH_DEF, OP) EW_COMPLEX(AH_DEF, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) EW_COMPLEX(EW_TBL, OP) };
AH_OP(asinh) AH_OP(acosh) AH_OP(atanh)

static lt_tensor *run(const char *op, const lt_ew_loop *tbl, lt_tensor *self, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt) && !lt_dtype_is_complex(dt)) dt = lt_get_default_dtype();
  lt_ew_loop fn = lt_ew_pick(op, tbl, dt);
  if (!fn) return NULL;
  lt_ew e;
  e.op = op; e.nin = 1; e.in[0] = self; e.in_dt[0] = dt; e.out_dt = dt;
  e.fn = fn; e.ctx = NULL; e.grain = 0;
  return lt_ew_run(&e, out);
}

lt_tensor *lt_cpu_asinh(lt_tensor *self, lt_tensor *out) { return run("asinh", asinh_tbl, self, out); }
lt_tensor *lt_cpu_acosh(lt_tensor *self, lt_tensor *out) { return run("acosh", acosh_tbl, self, out); }
lt_tensor *lt_cpu_atanh(lt_tensor *self, lt_tensor *out) { return run("atanh", atanh_tbl, self, out); }
