/*
** test_nvrtc.c — a kernel made at run time compiles with NVRTC for sm_90,
** without a driver: the source (written here, as a backend would write a
** fused elementwise kernel) includes the kernels' per-element math,
** cuda/kernels/ck_math.h, given to NVRTC as an in-memory header read from
** the tree. It is compiled to PTX (compute_90) and to a cubin (sm_90); the
** PTX must hold the kernels' entries for sm_90 and the cubin be a CUDA ELF
** image for sm_90 naming them. Nothing is loaded or run (no GPU here).
** cuda_fp16.h and cuda_bf16.h come from the toolkit's include directory.
** Run by make cuda-check: test_nvrtc SRC_DIR CUDA_INCLUDE_DIR; prints
** "N passed, N failed".
*/
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define CHECK(c) do { if (c) passed++; else { failed++; fprintf(stderr, "%s:%d: FAIL %s\n", __FILE__, __LINE__, #c); } } while (0)

static const char *source =
  "#include \"cuda/kernels/ck_math.h\"\n"
  "using namespace ck_rtc;\n"
  "/* y = sigmoid(a * x + b) in half, computing in float: a fusion no .cu file has */\n"
  "template<class T> __global__ void fused_axpb_sigmoid(T *y, const T *x, float a, float b, unsigned n) {\n"
  "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n) y[i] = ck_store<T>(ck_op_sigmoid<float>()(a * ck_load(x[i]) + b));\n"
  "}\n"
  "extern \"C\" __global__ void cast_bf16_to_i8(int8_t *y, const ck_bf16 *x, unsigned n) {\n"
  "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n) y[i] = ck_cvt<int8_t>::from(ck_load(x[i]));\n"
  "}\n";

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static int contains(const char *hay, size_t n, const char *needle) {
  size_t k = strlen(needle);
  for (size_t i = 0; i + k <= n; i++) if (memcmp(hay + i, needle, k) == 0) return 1;
  return 0;
}

/* compile for arch ("compute_90" or "sm_90"); the program, or NULL after printing the log */
static const char *cuda_include = "/usr/local/cuda/include";

static nvrtcProgram compile(const char *header, const char *arch, const char **lowered) {
  const char *hdr_names[1] = {"cuda/kernels/ck_math.h"};
  const char *hdrs[1] = {header};
  nvrtcProgram p;
  if (nvrtcCreateProgram(&p, source, "fused.cu", 1, hdrs, hdr_names) != NVRTC_SUCCESS) return NULL;
  nvrtcAddNameExpression(p, "fused_axpb_sigmoid<__half>");
  char opt[64], inc[4200];
  snprintf(opt, sizeof opt, "--gpu-architecture=%s", arch);
  snprintf(inc, sizeof inc, "--include-path=%s", cuda_include);
  const char *opts[] = {opt, inc, "-std=c++17", "--fmad=true"};
  nvrtcResult r = nvrtcCompileProgram(p, 4, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(p, &n);
  if (r != NVRTC_SUCCESS || n > 1) {
    char *log = malloc(n + 1);
    nvrtcGetProgramLog(p, log);
    fprintf(stderr, "nvrtc %s (%s): %s\n%s\n", arch, nvrtcGetErrorString(r), r == NVRTC_SUCCESS ? "warnings" : "failed", log);
    free(log);
    if (r != NVRTC_SUCCESS) { nvrtcDestroyProgram(&p); return NULL; }
  }
  if (nvrtcGetLoweredName(p, "fused_axpb_sigmoid<__half>", lowered) != NVRTC_SUCCESS) *lowered = NULL;
  return p;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "src";
  if (argc > 2) cuda_include = argv[2];
  char path[4096];
  snprintf(path, sizeof path, "%s/cuda/kernels/ck_math.h", dir);
  char *header = slurp(path);
  CHECK(header != NULL);
  if (!header) { printf("%d passed, %d failed\n", passed, failed); return 1; }
  int major = 0, minor = 0;
  CHECK(nvrtcVersion(&major, &minor) == NVRTC_SUCCESS && major >= 12);

  /* PTX for the virtual architecture */
  const char *lowered = NULL;
  nvrtcProgram p = compile(header, "compute_90", &lowered);
  CHECK(p != NULL);
  if (p) {
    size_t n = 0;
    CHECK(nvrtcGetPTXSize(p, &n) == NVRTC_SUCCESS && n > 100);
    char *ptx = malloc(n);
    CHECK(nvrtcGetPTX(p, ptx) == NVRTC_SUCCESS);
    CHECK(contains(ptx, n, ".target sm_90"));
    CHECK(contains(ptx, n, ".entry cast_bf16_to_i8"));
    CHECK(lowered != NULL && contains(ptx, n, lowered));   /* the template's mangled name */
    CHECK(contains(ptx, n, "cvt.rn.f16.f32"));              /* the half rounding of ck_store */
    free(ptx);
    nvrtcDestroyProgram(&p);
  }

  /* a cubin for the real one */
  p = compile(header, "sm_90", &lowered);
  CHECK(p != NULL);
  if (p) {
    size_t n = 0;
    CHECK(nvrtcGetCUBINSize(p, &n) == NVRTC_SUCCESS && n > 64);
    unsigned char *cubin = malloc(n);
    CHECK(nvrtcGetCUBIN(p, (char *)cubin) == NVRTC_SUCCESS);
    CHECK(memcmp(cubin, "\177ELF", 4) == 0);
    CHECK(cubin[4] == 2);                                     /* ELFCLASS64 */
    CHECK((cubin[18] | cubin[19] << 8) == 190);               /* e_machine EM_CUDA */
    unsigned flags = cubin[48] | cubin[49] << 8 | cubin[50] << 16 | (unsigned)cubin[51] << 24;
    /* e_flags carries the SM: 0x5a (90) in the low byte in the pre-12.x layout, or in bits
    ** 8..15 in the current one */
    CHECK((flags & 0xff) == 90 || ((flags >> 8) & 0xff) == 90);
    CHECK(contains((char *)cubin, n, "cast_bf16_to_i8"));
    CHECK(lowered != NULL && contains((char *)cubin, n, lowered));
    free(cubin);
    nvrtcDestroyProgram(&p);
  }
  free(header);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
