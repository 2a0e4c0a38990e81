/*
** pointwise.cu — the pointwise family's entry (pointwise.h): routes a call to
** the group of its op, and the build's table (lt_ck_pw_device_kernels or
** lt_ck_host_pw_kernels).
*/
#include "cuda/kernels/pw.h"

#define PW_LABEL(name, nin, mask, bout) case LT_CK_PW_##name:

extern "C" int CK_API(pointwise)(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream) {
  using namespace CK_NS;
  if (!c) return LT_CK_EINVAL;
  switch (c->op) {
    LT_CK_PW_UNARY(PW_LABEL) return pw_run_unary(c, g, stream);
    LT_CK_PW_SPECIAL(PW_LABEL) return pw_run_special(c, g, stream);
    LT_CK_PW_ACT(PW_LABEL) return pw_run_act(c, g, stream);
    LT_CK_PW_BINARY(PW_LABEL) return pw_run_binary(c, g, stream);
    LT_CK_PW_COMPARE(PW_LABEL) return pw_run_compare(c, g, stream);
    LT_CK_PW_TERNARY(PW_LABEL) return pw_run_ternary(c, g, stream);
    default: return LT_CK_EINVAL;
  }
}

#if defined(__CUDACC__)
#define PW_TABLE_NAME "sm_90"
#define PW_TABLE_FN lt_ck_pw_device_kernels
#else
#define PW_TABLE_NAME "host"
#define PW_TABLE_FN lt_ck_host_pw_kernels
#endif

static const lt_ck_pw_kernels pw_table = { PW_TABLE_NAME, CK_API(pointwise) };

extern "C" const lt_ck_pw_kernels *PW_TABLE_FN(void) { return &pw_table; }
