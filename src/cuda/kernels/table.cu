/*
** table.cu — the build's entry table (lt_ck_device_kernels or
** lt_ck_host_kernels), result names and the test knobs.
*/
#include "cuda/kernels/ck.h"

namespace CK_NS {
bool ck_force64;
long ck_paths[LT_CK_NUM_PATHS];
}

extern "C" const char *CK_API(error_string)(int code) {
  switch (code) {
    case LT_CK_OK: return "success";
    case LT_CK_EUNSUPPORTED: return "the op is not implemented for this dtype";
    case LT_CK_EINVAL: return "invalid argument (dtype, op, geometry or pointer)";
    default: break;
  }
#if defined(__CUDACC__)
  if (code > 0) return cudaGetErrorString((cudaError_t)code);
#endif
  return "unknown kernel result";
}

#if defined(__CUDACC__)
#define CK_TABLE_NAME "sm_90"
#define CK_TABLE_FN lt_ck_device_kernels
#else
#define CK_TABLE_NAME "host"
#define CK_TABLE_FN lt_ck_host_kernels
#endif

static const lt_ck_kernels ck_table = {
  CK_TABLE_NAME, CK_API(copy), CK_API(fill), CK_API(unary), CK_API(binary), CK_API(error_string),
};

extern "C" const lt_ck_kernels *CK_TABLE_FN(void) { return &ck_table; }

extern "C" void CK_API(force_index64)(int on) { CK_NS::ck_force64 = on != 0; }

extern "C" void CK_API(path_counts)(long counts[LT_CK_NUM_PATHS], int reset) {
  for (int i = 0; i < LT_CK_NUM_PATHS; i++) {
    if (counts) counts[i] = CK_NS::ck_paths[i];
    if (reset) CK_NS::ck_paths[i] = 0;
  }
}
