/* placeholder kernels so the pipeline builds; replaced by the elementwise work */
#include "lt_ops.h"
static lt_tensor *nyi(const char *op) { return lt_error_null("%s: not implemented yet", op); }
lt_tensor *lt_cpu_add(lt_tensor *self, lt_tensor *other, lt_scalar alpha, lt_tensor *out) { return nyi("add"); }
lt_tensor *lt_cpu_sub(lt_tensor *self, lt_tensor *other, lt_scalar alpha, lt_tensor *out) { return nyi("sub"); }
lt_tensor *lt_cpu_mul(lt_tensor *self, lt_tensor *other, lt_tensor *out) { return nyi("mul"); }
lt_tensor *lt_cpu_div(lt_tensor *self, lt_tensor *other, const char *rounding_mode, lt_tensor *out) { return nyi("div"); }
lt_tensor *lt_cpu_remainder(lt_tensor *self, lt_tensor *other, lt_tensor *out) { return nyi("remainder"); }
lt_tensor *lt_cpu_pow(lt_tensor *self, lt_tensor *exponent, lt_tensor *out) { return nyi("pow"); }
lt_tensor *lt_cpu_neg(lt_tensor *self, lt_tensor *out) { return nyi("neg"); }
