/*
** test_cuda_kernels_host.c — the CUDA kernels (src/cuda/kernels) through
** their host build: the same sources nvcc compiles for sm_90, compiled by the
** host C++ compiler and called through the C entry points of kernels.h on
** host memory.
**
** Every kernel runs on many geometries (sizes 0, 1, 31, 1025, 2^20+3; 0-d;
** transposed, sliced and 8-d inputs and outputs; broadcast strides of 0; a
** number operand; misaligned pointers; the 64-bit index path forced) and is
** checked two ways: against the CPU backend doing the same op on the same
** buffers through lutorch (lt_add_out, lt_tensor_copy_, ...), and against a
** plain reference loop written here (an odometer over the shape, values
** through the core's conversions). Integers and bool must match exactly,
** floats exactly where IEEE arithmetic fixes the result (alpha is a power
** of two for that) and within a few ulps for exp, sigmoid and tanh, whose
** libm differs (the CPU's is vectorised); the 16-bit float conversions
** are checked bit for bit against the core's, exhaustively for half -> float.
** Elements outside an output view must stay untouched.
**
** Built only where a C++ compiler is found (Makefile, "CUDA kernels");
** otherwise this file is built with CK_NO_HOST_BUILD and reports a skip.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#ifdef CK_NO_HOST_BUILD
int main(void) {
  printf("SKIP test_cuda_kernels_host: no C++ compiler for the host build of the CUDA kernels\n");
  printf("0 passed, 0 failed\n");
  return 0;
}
#else

#include "ctest.h"

#include "dispatch/dispatch.h"
#include "core/tensor.h"
#include "lt_ops.h"
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/pointwise.h"

/* the kernels' dtype codes are lt_dtype's */
#define CK_SAME_CODE(E, ST, CT, N) _Static_assert((int)E == (int)LT_CK_##N##_CODE_, #N);
#define LT_CK_float64_CODE_ LT_CK_FLOAT64
#define LT_CK_float32_CODE_ LT_CK_FLOAT32
#define LT_CK_float16_CODE_ LT_CK_FLOAT16
#define LT_CK_bfloat16_CODE_ LT_CK_BFLOAT16
#define LT_CK_int64_CODE_ LT_CK_INT64
#define LT_CK_int32_CODE_ LT_CK_INT32
#define LT_CK_int16_CODE_ LT_CK_INT16
#define LT_CK_int8_CODE_ LT_CK_INT8
#define LT_CK_uint8_CODE_ LT_CK_UINT8
#define LT_CK_bool_CODE_ LT_CK_BOOL
#define LT_CK__Bool_CODE_ LT_CK_BOOL
LT_FORALL_DTYPES(CK_SAME_CODE)
/* the kernels know the real dtypes only; complex tensors reach cuda kernels as their real dtype */
_Static_assert((int)LT_CK_NUM_DTYPES == (int)LT_NUM_REAL_DTYPES, "dtype count");

static const lt_ck_kernels *K;

/* ---- random values ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
  return rng_state;
}
static double rnd_unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

/* values that reach the conversions' edges: signed zeros, inf, NaN, out of
** every integer range, halfway cases, half's overflow and subnormals */
static const double specials[] = {
  0.0, -0.0, INFINITY, -INFINITY, NAN, 1e10, -3e9, 300.5, -129.7, 65504.0, 65520.0, 70000.0,
  1e-7, -6e-8, 2.5, -2.5, 255.9, 256.0, -1.0, 2147483648.0, -2147483649.0, 9.3e18, -9.3e18,
  0.5, 1.5, 3.0e38, -1e-40,
};

static void rnd_value(lt_dtype dt, void *p) {
  if (lt_dtype_is_float(dt)) {
    double v = rnd() % 10 == 0 ? specials[rnd() % (sizeof specials / sizeof specials[0])]
                               : rnd_unit() * 8.0 - 4.0;
    lt_dtype_store_double(dt, p, v);
  } else if (dt == LT_BOOL) {
    lt_dtype_store_int64(dt, p, (int64_t)(rnd() & 1));
  } else {
    int64_t v = rnd() % 2 ? (int64_t)rnd() : (int64_t)(rnd() % 11) - 5;
    lt_dtype_store_int64(dt, p, v);
  }
}

/* ---- geometries ---- */

typedef struct shape {
  const char *name;
  int ndim;
  int64_t sizes[LT_CK_MAX_DIMS];
  int64_t strides[LT_CK_MAX_OPERANDS][LT_CK_MAX_DIMS];
  int64_t offset[LT_CK_MAX_OPERANDS];   /* in elements, into each operand's buffer */
  int number;                           /* binary: 1 or 2 = that input is a number */
  int force64;
} shape;

static int64_t numel_of(const shape *s) {
  int64_t n = 1;
  for (int d = 0; d < s->ndim; d++) n *= s->sizes[d];
  return n;
}

/* elements an operand's buffer needs */
static int64_t extent(const shape *s, int k) {
  int64_t e = s->offset[k] + 1;
  if (numel_of(s) == 0) return e;
  for (int d = 0; d < s->ndim; d++) e += (s->sizes[d] - 1) * s->strides[k][d];
  return e;
}

static void contiguous(int ndim, const int64_t *sizes, int64_t *strides) {
  int64_t st = 1;
  for (int d = ndim - 1; d >= 0; d--) { strides[d] = st; st *= sizes[d]; }
}

static void set_all_contiguous(shape *s) {
  for (int k = 0; k < LT_CK_MAX_OPERANDS; k++) contiguous(s->ndim, s->sizes, s->strides[k]);
}

#define BIG (1048576 + 3)

/* the geometries every kernel runs on; `arity` inputs */
static int make_shapes(shape *out, int arity) {
  int n = 0;
  shape *s;
  static const int64_t lens[] = {0, 1, 31, 1025, BIG};
  for (int i = 0; i < 5; i++) {
    s = &out[n++]; memset(s, 0, sizeof *s);
    s->name = i == 0 ? "[0]" : i == 1 ? "[1]" : i == 2 ? "[31]" : i == 3 ? "[1025]" : "[2^20+3]";
    s->ndim = 1; s->sizes[0] = lens[i]; set_all_contiguous(s);
  }
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "[3,0,2]"; s->ndim = 3; s->sizes[0] = 3; s->sizes[1] = 0; s->sizes[2] = 2; set_all_contiguous(s);
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "0-d"; s->ndim = 0;
  /* misaligned: every pointer one element past a 16-byte boundary */
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "[1025] misaligned"; s->ndim = 1; s->sizes[0] = 1025; set_all_contiguous(s);
  for (int k = 0; k < 3; k++) s->offset[k] = 1;
  /* inputs transposed: a contiguous [33,31] read as [31,33] */
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "[31,33] inputs transposed"; s->ndim = 2; s->sizes[0] = 31; s->sizes[1] = 33; set_all_contiguous(s);
  for (int k = 1; k < 3; k++) { s->strides[k][0] = 1; s->strides[k][1] = 31; }
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "[31,33] output transposed"; s->ndim = 2; s->sizes[0] = 31; s->sizes[1] = 33; set_all_contiguous(s);
  s->strides[0][0] = 1; s->strides[0][1] = 31;
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "[1025] step 2, offset 3"; s->ndim = 1; s->sizes[0] = 1025;
  for (int k = 0; k < 3; k++) { s->strides[k][0] = 2; s->offset[k] = 3; }
  /* broadcast: the last input is a row (stride 0 down the columns); the first of two a column */
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "[33,31] broadcast"; s->ndim = 2; s->sizes[0] = 33; s->sizes[1] = 31; set_all_contiguous(s);
  s->strides[arity][0] = 0;
  if (arity == 2) { s->strides[1][0] = 1; s->strides[1][1] = 0; }
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "[5,7] one element broadcast"; s->ndim = 2; s->sizes[0] = 5; s->sizes[1] = 7; set_all_contiguous(s);
  s->strides[1][0] = s->strides[1][1] = 0;
  /* 8 dims: inputs with the dims reversed, a broadcast dim in the second */
  static const int64_t sz8[8] = {2, 3, 1, 2, 3, 2, 1, 2};
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "8-d permuted"; s->ndim = 8; memcpy(s->sizes, sz8, sizeof sz8); set_all_contiguous(s);
  { int64_t rs[8], rst[8];
    for (int d = 0; d < 8; d++) rs[d] = sz8[7 - d];
    contiguous(8, rs, rst);
    for (int d = 0; d < 8; d++) s->strides[1][d] = rst[7 - d];
    s->strides[2][4] = 0; }
  s = &out[n++]; *s = out[n - 2]; s->name = "8-d permuted, 64-bit index"; s->force64 = 1;
  /* a big transposed input: 1025 x 1023 */
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "[1025,1023] input transposed"; s->ndim = 2; s->sizes[0] = 1025; s->sizes[1] = 1023; set_all_contiguous(s);
  s->strides[1][0] = 1; s->strides[1][1] = 1025;
  s = &out[n++]; memset(s, 0, sizeof *s);
  s->name = "[31,33] inputs transposed, 64-bit index"; s->ndim = 2; s->sizes[0] = 31; s->sizes[1] = 33;
  set_all_contiguous(s);
  for (int k = 1; k < 3; k++) { s->strides[k][0] = 1; s->strides[k][1] = 31; }
  s->force64 = 1;
  if (arity == 2) {
    static const char *names[] = {"[1025] b a number", "[33,31] a a number", "0-d b a number", "[2^20+3] b a number"};
    static const int64_t len[] = {1025, 0, 0, BIG};
    for (int i = 0; i < 4; i++) {
      s = &out[n++]; memset(s, 0, sizeof *s);
      s->name = names[i];
      if (i == 1) { s->ndim = 2; s->sizes[0] = 33; s->sizes[1] = 31; }
      else if (i == 2) s->ndim = 0;
      else { s->ndim = 1; s->sizes[0] = len[i]; }
      set_all_contiguous(s);
      s->number = i == 1 ? 1 : 2;
    }
  }
  return n;
}

static lt_ck_geom geom_of(const shape *s) {
  lt_ck_geom g;
  memset(&g, 0, sizeof g);
  g.ndim = s->ndim;
  memcpy(g.sizes, s->sizes, sizeof g.sizes);
  memcpy(g.strides, s->strides, sizeof g.strides);
  return g;
}

/* ---- buffers and their lutorch views ---- */

typedef struct buf { lt_dtype dt; int64_t n; char *p; } buf;

static buf buf_new(lt_dtype dt, int64_t n) {
  buf b = {dt, n + 16, NULL};
  b.p = aligned_alloc(64, (size_t)((b.n * (int64_t)lt_dtype_size(dt) + 63) / 64 * 64));
  return b;
}
static void buf_random(buf *b) {
  for (int64_t i = 0; i < b->n; i++) rnd_value(b->dt, b->p + i * (int64_t)lt_dtype_size(b->dt));
}
static void buf_sentinel(buf *b) { memset(b->p, 0x5b, (size_t)(b->n * (int64_t)lt_dtype_size(b->dt))); }
static buf buf_clone(const buf *b) {
  buf c = buf_new(b->dt, b->n - 16);
  memcpy(c.p, b->p, (size_t)(b->n * (int64_t)lt_dtype_size(b->dt)));
  return c;
}
static void *at(const buf *b, int64_t i) { return b->p + i * (int64_t)lt_dtype_size(b->dt); }

/* operand k of shape s over buffer b, as a CPU tensor view */
static lt_tensor *view(const buf *b, const shape *s, int k) {
  int64_t n = b->n;
  lt_tensor *base = lt_tensor_from_blob(b->p, b->dt, 1, &n, NULL, NULL, NULL);
  lt_tensor *v = lt_tensor_alias(base, s->offset[k], s->ndim, s->sizes, s->strides[k]);
  lt_tensor_release(base);
  return v;
}

/* ---- comparing ---- */

/* distance in units in the last place of dtype dt; 0 when equal or both NaN */
static double ulps(lt_dtype dt, const void *a, const void *b) {
  size_t es = lt_dtype_size(dt);
  if (memcmp(a, b, es) == 0) return 0;
  if (!lt_dtype_is_float(dt)) return INFINITY;
  double x = lt_dtype_load_double(dt, a), y = lt_dtype_load_double(dt, b);
  if (x != x && y != y) return 0;
  if (x != x || y != y) return INFINITY;
  if (x == y) return 0;                        /* +0 and -0 */
  int64_t ia, ib;
  if (dt == LT_FLOAT64) { memcpy(&ia, a, 8); memcpy(&ib, b, 8); }
  else if (dt == LT_FLOAT32) { int32_t u, v; memcpy(&u, a, 4); memcpy(&v, b, 4); ia = u; ib = v; }
  else { int16_t u, v; memcpy(&u, a, 2); memcpy(&v, b, 2); ia = u; ib = v; }
  /* sign-magnitude to an ordered line */
  int64_t top = dt == LT_FLOAT64 ? INT64_MIN : dt == LT_FLOAT32 ? INT32_MIN : INT16_MIN;
  if (ia < 0) ia = top - ia;
  if (ib < 0) ib = top - ib;
  if ((ia < 0) == (ib < 0)) return (double)(ia > ib ? ia - ib : ib - ia);   /* no overflow */
  return fabs((double)ia - (double)ib);
}

static char fail_note[512];

/* every element of got equals want within tol ulps; the first difference in fail_note */
static int same_buffers(const buf *got, const buf *want, double tol) {
  for (int64_t i = 0; i < got->n; i++) {
    double u = ulps(got->dt, at(got, i), at(want, i));
    if (u > tol) {
      snprintf(fail_note, sizeof fail_note, "element %lld: %.9g vs %.9g (%g ulps)", (long long)i,
               lt_dtype_load_double(got->dt, at(got, i)), lt_dtype_load_double(want->dt, at(want, i)), u);
      return 0;
    }
  }
  return 1;
}

#define CHECK_CASE(cond, ...) do { \
    if (cond) CHECK(1); \
    else { fprintf(stderr, __VA_ARGS__); fprintf(stderr, ": %s\n", fail_note); CHECK(cond); } \
  } while (0)

/* the odometer: calls f(index of each operand) for every element, row-major */
typedef void (*visit_fn)(const int64_t *off, void *ctx);
static void odometer(const shape *s, visit_fn f, void *ctx) {
  if (numel_of(s) == 0) return;
  int64_t idx[LT_CK_MAX_DIMS] = {0}, off[LT_CK_MAX_OPERANDS];
  for (;;) {
    for (int k = 0; k < LT_CK_MAX_OPERANDS; k++) {
      off[k] = s->offset[k];
      for (int d = 0; d < s->ndim; d++) off[k] += idx[d] * s->strides[k][d];
    }
    f(off, ctx);
    int d = s->ndim - 1;
    while (d >= 0 && ++idx[d] == s->sizes[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

/* ---- reference math, in double / int64 through the core's conversions ---- */

static const char *unary_names[] = {"neg", "abs", "exp", "relu", "sigmoid", "tanh"};
static const char *binary_names[] = {"add", "sub", "mul", "div"};

static bool unary_ok(int op, lt_dtype dt) {
  switch (op) {
    case LT_CK_NEG: case LT_CK_RELU: return dt != LT_BOOL;
    case LT_CK_ABS: return true;
    default: return lt_dtype_is_float(dt);
  }
}
static bool binary_ok(int op, lt_dtype dt) {
  return op == LT_CK_SUB ? dt != LT_BOOL : op == LT_CK_DIV ? lt_dtype_is_float(dt) : true;
}

static void ref_unary(int op, lt_dtype dt, const void *x, void *o) {
  if (lt_dtype_is_float(dt)) {
    double v = lt_dtype_load_double(dt, x), r;
    if (dt != LT_FLOAT64) v = (float)v;
    switch (op) {
      case LT_CK_NEG: r = -v; break;
      case LT_CK_ABS: r = fabs(v); break;
      case LT_CK_EXP: r = exp(v); break;
      case LT_CK_RELU: r = v < 0 ? 0 : v; break;
      case LT_CK_SIGMOID: r = 1 / (1 + exp(-v)); break;
      default: r = tanh(v); break;
    }
    lt_dtype_store_double(dt, o, r);
    return;
  }
  int64_t v = lt_dtype_load_int64(dt, x), r;
  bool sgn = dt != LT_UINT8 && dt != LT_BOOL;
  switch (op) {
    case LT_CK_NEG: r = (int64_t)(0 - (uint64_t)v); break;
    case LT_CK_ABS: r = sgn && v < 0 ? (int64_t)(0 - (uint64_t)v) : v; break;
    default: r = sgn && v < 0 ? 0 : v; break;   /* relu */
  }
  lt_dtype_store_int64(dt, o, r);
}

static void ref_binary(int op, lt_dtype dt, const void *x, const void *y, lt_ck_scalar alpha, void *o) {
  if (lt_dtype_is_float(dt)) {
    double a = lt_dtype_load_double(dt, x), b = lt_dtype_load_double(dt, y), r;
    double al = dt == LT_FLOAT64 ? alpha.f : (float)alpha.f;
    switch (op) {
      case LT_CK_ADD: r = a + al * b; break;
      case LT_CK_SUB: r = a - al * b; break;
      case LT_CK_MUL: r = a * b; break;
      default: r = a / b; break;
    }
    lt_dtype_store_double(dt, o, r);
    return;
  }
  int64_t a = lt_dtype_load_int64(dt, x), b = lt_dtype_load_int64(dt, y), r;
  if (dt == LT_BOOL) r = op == LT_CK_ADD ? (a || (alpha.i && b)) : (a && b);
  else {
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b, ual = (uint64_t)alpha.i;
    r = (int64_t)(op == LT_CK_ADD ? ua + ual * ub : op == LT_CK_SUB ? ua - ual * ub : ua * ub);
  }
  lt_dtype_store_int64(dt, o, r);   /* wraps to the dtype */
}

typedef struct ref_ctx {
  int kind, op;                 /* kind: 0 fill, 1 copy (same dtype), 2 unary, 3 binary */
  lt_dtype dt;
  buf *out, *in0, *in1;
  const void *num0, *num1;
  lt_ck_scalar alpha;
} ref_ctx;

static void ref_visit(const int64_t *off, void *vctx) {
  ref_ctx *c = vctx;
  size_t es = lt_dtype_size(c->dt);
  void *o = at(c->out, off[0]);
  switch (c->kind) {
    case 0: memcpy(o, c->num0, es); break;
    case 1: memcpy(o, at(c->in0, off[1]), es); break;
    case 2: ref_unary(c->op, c->dt, at(c->in0, off[1]), o); break;
    default:
      ref_binary(c->op, c->dt, c->num0 ? c->num0 : at(c->in0, off[1]),
                 c->num1 ? c->num1 : at(c->in1, off[2]), c->alpha, o);
  }
}

/* ---- the kernels against the CPU and the reference ---- */

static double op_tolerance(int kind, int op, lt_dtype dt, double alpha) {
  if (kind == 2 && (op == LT_CK_EXP || op == LT_CK_SIGMOID || op == LT_CK_TANH))
    return dt == LT_FLOAT16 || dt == LT_BFLOAT16 ? 1 : 8;
  (void)alpha;
  return 0;
}

static void set_force64(int on) { lt_ck_host_force_index64(on); }

static void check_unary(int op, lt_dtype dt, const shape *s) {
  buf a = buf_new(dt, extent(s, 1)), o = buf_new(dt, extent(s, 0));
  buf_random(&a); buf_sentinel(&o);
  buf cpu = buf_clone(&o), ref = buf_clone(&o);
  lt_ck_geom g = geom_of(s);
  set_force64(s->force64);
  int r = K->unary(op, dt, at(&o, s->offset[0]), at(&a, s->offset[1]), &g, NULL);
  set_force64(0);
  CHECK_EQ_INT(r, LT_CK_OK);
  lt_tensor *va = view(&a, s, 1), *vo = view(&cpu, s, 0), *res = NULL;
  switch (op) {
    case LT_CK_NEG: res = lt_neg_out(va, vo); break;
    case LT_CK_ABS: res = lt_abs_out(va, vo); break;
    case LT_CK_EXP: res = lt_exp_out(va, vo); break;
    case LT_CK_RELU: res = lt_relu_out(va, vo); break;
    case LT_CK_SIGMOID: res = lt_sigmoid_out(va, vo); break;
    default: res = lt_tanh_out(va, vo); break;
  }
  CHECK(res != NULL);
  if (!res) fprintf(stderr, "  %s\n", lt_error_message());
  lt_tensor_release(res); lt_tensor_release(va); lt_tensor_release(vo);
  double tol = op_tolerance(2, op, dt, 1);
  CHECK_CASE(same_buffers(&o, &cpu, tol), "%s %s %s vs the CPU", unary_names[op], lt_dtype_name(dt), s->name);
  ref_ctx c = {2, op, dt, &ref, &a, NULL, NULL, NULL, {0, 0}};
  odometer(s, ref_visit, &c);
  CHECK_CASE(same_buffers(&o, &ref, tol), "%s %s %s vs the reference", unary_names[op], lt_dtype_name(dt), s->name);
  free(a.p); free(o.p); free(cpu.p); free(ref.p);
}

static void check_binary(int op, lt_dtype dt, const shape *s, lt_scalar alpha) {
  buf a = buf_new(dt, extent(s, 1)), b = buf_new(dt, extent(s, 2)), o = buf_new(dt, extent(s, 0));
  buf num = buf_new(dt, 1);
  buf_random(&a); buf_random(&b); buf_random(&num); buf_sentinel(&o);
  if (dt == LT_BOOL && alpha.type == LT_SCALAR_INT) alpha = lt_scalar_bool(alpha.v.i != 0);
  buf cpu = buf_clone(&o), ref = buf_clone(&o);
  lt_ck_geom g = geom_of(s);
  lt_ck_scalar al = {lt_scalar_to_double(alpha), alpha.type == LT_SCALAR_FLOAT ? 0 : alpha.v.i};
  const void *pa = s->number == 1 ? NULL : at(&a, s->offset[1]);
  const void *pb = s->number == 2 ? NULL : at(&b, s->offset[2]);
  set_force64(s->force64);
  int r = K->binary(op, dt, at(&o, s->offset[0]), pa, pb, num.p, al, &g, NULL);
  set_force64(0);
  CHECK_EQ_INT(r, LT_CK_OK);
  /* the CPU sees a number operand as a one-element tensor broadcast */
  shape sc = *s;
  if (s->number) for (int d = 0; d < s->ndim; d++) sc.strides[s->number][d] = 0;
  if (s->number) sc.offset[s->number] = 0;
  lt_tensor *va = view(s->number == 1 ? &num : &a, &sc, 1), *vb = view(s->number == 2 ? &num : &b, &sc, 2);
  lt_tensor *vo = view(&cpu, s, 0), *res = NULL;
  switch (op) {
    case LT_CK_ADD: res = lt_add_out(va, vb, alpha, vo); break;
    case LT_CK_SUB: res = lt_sub_out(va, vb, alpha, vo); break;
    case LT_CK_MUL: res = lt_mul_out(va, vb, vo); break;
    default: res = lt_div_out(va, vb, NULL, vo); break;
  }
  CHECK(res != NULL);
  if (!res) fprintf(stderr, "  %s\n", lt_error_message());
  lt_tensor_release(res); lt_tensor_release(va); lt_tensor_release(vb); lt_tensor_release(vo);
  double tol = op_tolerance(3, op, dt, al.f);
  CHECK_CASE(same_buffers(&o, &cpu, tol), "%s %s %s alpha %g vs the CPU", binary_names[op], lt_dtype_name(dt), s->name, al.f);
  ref_ctx c = {3, op, dt, &ref, &a, &b, s->number == 1 ? num.p : NULL, s->number == 2 ? num.p : NULL, al};
  odometer(s, ref_visit, &c);
  CHECK_CASE(same_buffers(&o, &ref, tol), "%s %s %s alpha %g vs the reference", binary_names[op], lt_dtype_name(dt), s->name, al.f);
  free(a.p); free(b.p); free(o.p); free(num.p); free(cpu.p); free(ref.p);
}

static void check_copy(lt_dtype dd, lt_dtype sd, const shape *s) {
  buf a = buf_new(sd, extent(s, 1)), o = buf_new(dd, extent(s, 0));
  buf_random(&a); buf_sentinel(&o);
  buf cpu = buf_clone(&o);
  lt_ck_geom g = geom_of(s);
  set_force64(s->force64);
  int r = K->copy(at(&o, s->offset[0]), dd, at(&a, s->offset[1]), sd, &g, NULL);
  set_force64(0);
  CHECK_EQ_INT(r, LT_CK_OK);
  lt_tensor *va = view(&a, s, 1), *vo = view(&cpu, s, 0);
  CHECK(lt_tensor_copy_(vo, va) == 0);
  lt_tensor_release(va); lt_tensor_release(vo);
  CHECK_CASE(same_buffers(&o, &cpu, 0), "copy %s <- %s %s vs the CPU", lt_dtype_name(dd), lt_dtype_name(sd), s->name);
  if (dd == sd) {   /* bits move: the reference copies bytes */
    buf ref = buf_new(dd, extent(s, 0));
    buf_sentinel(&ref);
    ref_ctx c = {1, 0, dd, &ref, &a, NULL, NULL, NULL, {0, 0}};
    odometer(s, ref_visit, &c);
    CHECK_CASE(memcmp(o.p, ref.p, (size_t)(o.n * (int64_t)lt_dtype_size(dd))) == 0,
               "copy %s %s vs the reference", lt_dtype_name(dd), s->name);
    free(ref.p);
  }
  free(a.p); free(o.p); free(cpu.p);
}

static void check_fill(lt_dtype dt, const shape *s) {
  buf o = buf_new(dt, extent(s, 0)), v = buf_new(dt, 1);
  buf_random(&v); buf_sentinel(&o);
  buf cpu = buf_clone(&o), ref = buf_clone(&o);
  lt_ck_geom g = geom_of(s);
  set_force64(s->force64);
  int r = K->fill(at(&o, s->offset[0]), dt, v.p, &g, NULL);
  set_force64(0);
  CHECK_EQ_INT(r, LT_CK_OK);
  lt_tensor *vo = view(&cpu, s, 0);
  lt_scalar sv = lt_dtype_is_float(dt) ? lt_scalar_float(lt_dtype_load_double(dt, v.p))
               : dt == LT_BOOL ? lt_scalar_bool(lt_dtype_load_int64(dt, v.p) != 0)
               : lt_scalar_int(lt_dtype_load_int64(dt, v.p));
  CHECK(lt_tensor_fill_(vo, sv) == 0);
  lt_tensor_release(vo);
  CHECK_CASE(same_buffers(&o, &cpu, 0), "fill %s %s vs the CPU", lt_dtype_name(dt), s->name);
  ref_ctx c = {0, 0, dt, &ref, NULL, NULL, v.p, NULL, {0, 0}};
  odometer(s, ref_visit, &c);
  CHECK_CASE(memcmp(o.p, ref.p, (size_t)(o.n * (int64_t)lt_dtype_size(dt))) == 0,
             "fill %s %s vs the reference", lt_dtype_name(dt), s->name);
  free(o.p); free(v.p); free(cpu.p); free(ref.p);
}

/* the big shapes make the run long; every op meets them in a few dtypes */
static bool skip_big(const shape *s, lt_dtype dt) {
  bool big = numel_of(s) > 100000;
  return big && !(dt == LT_FLOAT32 || dt == LT_FLOAT16 || dt == LT_BFLOAT16 || dt == LT_INT64 || dt == LT_UINT8);
}

/* ---- tests ---- */

TEST(table_and_errors) {
  CHECK(K != NULL && strcmp(K->name, "host") == 0);
  CHECK(K->copy == lt_ck_host_copy && K->binary == lt_ck_host_binary);
  CHECK(strstr(K->error_string(LT_CK_EUNSUPPORTED), "not implemented") != NULL);
  float x = 1, y = 0;
  lt_ck_geom g; memset(&g, 0, sizeof g);
  g.ndim = 1; g.sizes[0] = 1; g.strides[0][0] = g.strides[1][0] = g.strides[2][0] = 1;
  lt_ck_scalar one = {1, 1};
  CHECK_EQ_INT(K->copy(&y, 99, &x, LT_CK_FLOAT32, &g, NULL), LT_CK_EINVAL);
  CHECK_EQ_INT(K->copy(NULL, LT_CK_FLOAT32, &x, LT_CK_FLOAT32, &g, NULL), LT_CK_EINVAL);
  CHECK_EQ_INT(K->copy(&y, LT_CK_FLOAT32, &x, LT_CK_FLOAT32, NULL, NULL), LT_CK_EINVAL);
  CHECK_EQ_INT(K->unary(LT_CK_NUM_UNARY, LT_CK_FLOAT32, &y, &x, &g, NULL), LT_CK_EINVAL);
  CHECK_EQ_INT(K->binary(LT_CK_ADD, LT_CK_FLOAT32, &y, NULL, NULL, &x, one, &g, NULL), LT_CK_EINVAL);
  CHECK_EQ_INT(K->binary(LT_CK_ADD, LT_CK_FLOAT32, &y, &x, NULL, NULL, one, &g, NULL), LT_CK_EINVAL);
  g.ndim = LT_CK_MAX_DIMS + 1;
  CHECK_EQ_INT(K->fill(&y, LT_CK_FLOAT32, &x, &g, NULL), LT_CK_EINVAL);
  /* 9 dims that do not merge are too many for a kernel; 16 that merge are fine */
  float big[1024];
  memset(big, 0, sizeof big);
  g.ndim = 9;
  for (int d = 0; d < 9; d++) { g.sizes[d] = 2; g.strides[0][d] = (int64_t)1 << (8 - d); g.strides[1][d] = (int64_t)1 << d; }
  CHECK_EQ_INT(K->copy(big, LT_CK_FLOAT32, big, LT_CK_FLOAT32, &g, NULL), LT_CK_EINVAL);
  g.ndim = 16;
  for (int d = 0; d < 16; d++) { g.sizes[d] = d < 10 ? 2 : 1; g.strides[0][d] = g.strides[1][d] = (int64_t)1 << (9 - (d < 10 ? d : 9)); }
  CHECK_EQ_INT(K->copy(big, LT_CK_FLOAT32, big, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);
  g.ndim = 1; g.sizes[0] = -1;
  CHECK_EQ_INT(K->fill(&y, LT_CK_FLOAT32, &x, &g, NULL), LT_CK_EINVAL);
  memset(&g, 0, sizeof g);
  g.ndim = 1; g.sizes[0] = 1; g.strides[0][0] = g.strides[1][0] = g.strides[2][0] = 1;
  /* ops a dtype does not take are refused, not run */
  for (int dt = 0; dt < LT_NUM_REAL_DTYPES; dt++) {
    int64_t in = 0, out = 0x1234;
    for (int op = 0; op < LT_CK_NUM_UNARY; op++) {
      int r = K->unary(op, dt, &out, &in, &g, NULL);
      CHECK_EQ_INT(r, unary_ok(op, (lt_dtype)dt) ? LT_CK_OK : LT_CK_EUNSUPPORTED);
    }
    for (int op = 0; op < LT_CK_NUM_BINARY; op++) {
      out = 0x1234;
      int r = K->binary(op, dt, &out, &in, &in, NULL, one, &g, NULL);
      CHECK_EQ_INT(r, binary_ok(op, (lt_dtype)dt) ? LT_CK_OK : LT_CK_EUNSUPPORTED);
      if (r != LT_CK_OK) CHECK_EQ_INT(out, 0x1234);
    }
  }
  CHECK_EQ_INT(K->copy(&y, LT_CK_FLOAT32, &x, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);
  CHECK(y == 1);
}

/* every half bit pattern to float, against the core's conversion, bit for bit */
TEST(half_to_float_exhaustive) {
  buf h = buf_new(LT_FLOAT16, 65536), f = buf_new(LT_FLOAT32, 65536), bf = buf_new(LT_BFLOAT16, 65536);
  for (int i = 0; i < 65536; i++) { ((uint16_t *)h.p)[i] = (uint16_t)i; ((uint16_t *)bf.p)[i] = (uint16_t)i; }
  lt_ck_geom g; memset(&g, 0, sizeof g);
  g.ndim = 1; g.sizes[0] = 65536; g.strides[0][0] = g.strides[1][0] = 1;
  CHECK_EQ_INT(K->copy(f.p, LT_CK_FLOAT32, h.p, LT_CK_FLOAT16, &g, NULL), LT_CK_OK);
  int bad = 0;
  for (int i = 0; i < 65536; i++) {
    float want = lt_half_to_float((lt_half)i), got = ((float *)f.p)[i];
    if (memcmp(&want, &got, 4) != 0 && bad++ < 3) fprintf(stderr, "  half %04x: %a vs %a\n", i, got, want);
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(K->copy(f.p, LT_CK_FLOAT32, bf.p, LT_CK_BFLOAT16, &g, NULL), LT_CK_OK);
  bad = 0;
  for (int i = 0; i < 65536; i++) {
    float want = lt_bf16_to_float((lt_bfloat16)i), got = ((float *)f.p)[i];
    if (memcmp(&want, &got, 4) != 0) bad++;
  }
  CHECK_EQ_INT(bad, 0);
  free(h.p); free(f.p); free(bf.p);
}

/* float to half and bfloat16 round to nearest even as the core does: random
** bit patterns, and for every 16-bit value the float halfway to the next one
** and its neighbours (where ties and carries happen) */
TEST(float_to_16bit_rounding) {
  int64_t n = BIG + 6 * 65536;
  buf f = buf_new(LT_FLOAT32, n), h = buf_new(LT_FLOAT16, n), b = buf_new(LT_BFLOAT16, n);
  uint32_t *u = (uint32_t *)f.p;
  int64_t k = 0;
  for (; k < BIG; k++) u[k] = (uint32_t)rnd();
  for (uint32_t i = 0; i < 65536; i++) {
    float lo = lt_half_to_float((lt_half)i), hi = lt_half_to_float((lt_half)(i + 1));
    float mid = (float)(((double)lo + (double)hi) / 2);
    uint32_t m; memcpy(&m, &mid, 4);
    u[k++] = m; u[k++] = m - 1; u[k++] = m + 1;
    uint32_t bm = (i << 16) | 0x8000u;               /* bfloat16's halfway point */
    u[k++] = bm; u[k++] = bm - 1; u[k++] = bm + 1;
  }
  lt_ck_geom g; memset(&g, 0, sizeof g);
  g.ndim = 1; g.sizes[0] = k; g.strides[0][0] = g.strides[1][0] = 1;
  CHECK_EQ_INT(K->copy(h.p, LT_CK_FLOAT16, f.p, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);
  CHECK_EQ_INT(K->copy(b.p, LT_CK_BFLOAT16, f.p, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);
  int bad_h = 0, bad_b = 0;
  for (int64_t i = 0; i < k; i++) {
    float x; memcpy(&x, &u[i], 4);
    uint16_t wh = lt_float_to_half(x), gh = ((uint16_t *)h.p)[i];
    uint16_t wb = lt_float_to_bf16(x), gb = ((uint16_t *)b.p)[i];
    /* NaN payloads may differ (the core makes one NaN); NaN must stay NaN */
    bool nan_h = (wh & 0x7c00) == 0x7c00 && (wh & 0x3ff) && (gh & 0x7c00) == 0x7c00 && (gh & 0x3ff);
    if (wh != gh && !nan_h && bad_h++ < 3) fprintf(stderr, "  half of %a: %04x vs %04x\n", x, gh, wh);
    if (wb != gb && bad_b++ < 3) fprintf(stderr, "  bfloat16 of %a: %04x vs %04x\n", x, gb, wb);
  }
  CHECK_EQ_INT(bad_h, 0);
  CHECK_EQ_INT(bad_b, 0);
  free(f.p); free(h.p); free(b.p);
}

TEST(copy_every_pair) {
  shape sh[32];
  int n = make_shapes(sh, 1);
  for (int dd = 0; dd < LT_NUM_REAL_DTYPES; dd++)
    for (int sd = 0; sd < LT_NUM_REAL_DTYPES; sd++)
      for (int i = 0; i < n; i++) {
        /* the biggest geometries for the conversions to and from float32 and the same-dtype moves */
        if (numel_of(&sh[i]) > 100000 && !(dd == sd || dd == LT_FLOAT32 || sd == LT_FLOAT32)) continue;
        check_copy((lt_dtype)dd, (lt_dtype)sd, &sh[i]);
      }
}

TEST(fill_every_dtype) {
  shape sh[32];
  int n = make_shapes(sh, 0);
  for (int dt = 0; dt < LT_NUM_REAL_DTYPES; dt++)
    for (int i = 0; i < n; i++) check_fill((lt_dtype)dt, &sh[i]);
}

TEST(unary_ops) {
  shape sh[32];
  int n = make_shapes(sh, 1);
  for (int op = 0; op < LT_CK_NUM_UNARY; op++)
    for (int dt = 0; dt < LT_NUM_REAL_DTYPES; dt++) {
      if (!unary_ok(op, (lt_dtype)dt)) continue;
      for (int i = 0; i < n; i++)
        if (!skip_big(&sh[i], (lt_dtype)dt)) check_unary(op, (lt_dtype)dt, &sh[i]);
    }
}

TEST(binary_ops) {
  shape sh[32];
  int n = make_shapes(sh, 2);
  for (int op = 0; op < LT_CK_NUM_BINARY; op++)
    for (int dt = 0; dt < LT_NUM_REAL_DTYPES; dt++) {
      if (!binary_ok(op, (lt_dtype)dt)) continue;
      bool fl = lt_dtype_is_float((lt_dtype)dt);
      for (int i = 0; i < n; i++) {
        if (skip_big(&sh[i], (lt_dtype)dt)) continue;
        check_binary(op, (lt_dtype)dt, &sh[i], lt_scalar_int(1));
        /* alpha other than 1 where the op takes one: a power of two for the
        ** floats, so that alpha * b is exact and the result the same whether
        ** or not a compiler fuses the multiply and add (CPU loops that hoist
        ** alpha * b out of the loop do not) */
        if ((op == LT_CK_ADD || op == LT_CK_SUB) && dt != LT_BOOL && numel_of(&sh[i]) < 100000)
          check_binary(op, (lt_dtype)dt, &sh[i], fl ? lt_scalar_float(-2.0) : lt_scalar_int(-3));
      }
    }
}

/* in place: out and the input are the same memory, element for element */
TEST(in_place) {
  int64_t n = 1025;
  buf a = buf_new(LT_FLOAT32, n), b = buf_new(LT_FLOAT32, n);
  buf_random(&a); buf_random(&b);
  buf want = buf_clone(&a);
  lt_ck_geom g; memset(&g, 0, sizeof g);
  g.ndim = 1; g.sizes[0] = n; g.strides[0][0] = g.strides[1][0] = g.strides[2][0] = 1;
  lt_ck_scalar one = {1, 1};
  for (int64_t i = 0; i < n; i++) ((float *)want.p)[i] += ((float *)b.p)[i];
  CHECK_EQ_INT(K->binary(LT_CK_ADD, LT_CK_FLOAT32, a.p, a.p, b.p, NULL, one, &g, NULL), LT_CK_OK);
  CHECK(same_buffers(&a, &want, 0));
  free(a.p); free(b.p); free(want.p);
}

/* each path is taken where it should be: vectorised when contiguous and
** aligned, 32-bit strided otherwise, 64-bit strided when forced or when a
** stride is negative (a reversed view, read back to front here) */
TEST(paths_taken) {
  long c[LT_CK_NUM_PATHS];
  lt_ck_host_path_counts(c, 1);
  _Alignas(16) float x[64];
  _Alignas(16) float y[64];
  for (int i = 0; i < 64; i++) x[i] = (float)i;
  lt_ck_geom g; memset(&g, 0, sizeof g);
  g.ndim = 1; g.sizes[0] = 33; g.strides[0][0] = g.strides[1][0] = 1;
  CHECK_EQ_INT(K->copy(y, LT_CK_FLOAT32, x, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);      /* vec */
  CHECK_EQ_INT(K->copy(y + 1, LT_CK_FLOAT32, x, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);  /* misaligned */
  CHECK(y[1] == 0 && y[33] == 32);
  g.strides[1][0] = 0;                                                                 /* broadcast */
  CHECK_EQ_INT(K->copy(y, LT_CK_FLOAT32, x + 7, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);
  CHECK(y[0] == 7 && y[32] == 7);
  lt_ck_host_force_index64(1);
  CHECK_EQ_INT(K->copy(y, LT_CK_FLOAT32, x + 5, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);
  lt_ck_host_force_index64(0);
  CHECK(y[0] == 5 && y[32] == 5);
  g.strides[1][0] = -1;
  CHECK_EQ_INT(K->copy(y, LT_CK_FLOAT32, x + 32, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);
  CHECK(y[0] == 32 && y[32] == 0);
  lt_ck_host_path_counts(c, 1);
  CHECK_EQ_INT(c[LT_CK_PATH_VEC], 1);
  CHECK_EQ_INT(c[LT_CK_PATH_STRIDED32], 2);
  CHECK_EQ_INT(c[LT_CK_PATH_STRIDED64], 2);
  /* dims of size 1 and dims contiguous in every operand merge: a [4,8] view
  ** of contiguous memory is one run, and 8 dims of size 1 one element */
  g.ndim = 2; g.sizes[0] = 4; g.sizes[1] = 8; g.strides[0][0] = g.strides[1][0] = 8;
  g.strides[0][1] = g.strides[1][1] = 1;
  CHECK_EQ_INT(K->copy(y, LT_CK_FLOAT32, x, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);
  g.ndim = 8;
  for (int d = 0; d < 8; d++) { g.sizes[d] = 1; g.strides[0][d] = 3; g.strides[1][d] = 5; }
  CHECK_EQ_INT(K->copy(y, LT_CK_FLOAT32, x + 8, LT_CK_FLOAT32, &g, NULL), LT_CK_OK);
  CHECK(y[0] == 8);
  lt_ck_host_path_counts(c, 1);
  CHECK_EQ_INT(c[LT_CK_PATH_VEC], 2);
  CHECK_EQ_INT(c[LT_CK_PATH_STRIDED32] + c[LT_CK_PATH_STRIDED64], 0);
}

/* ---- the pointwise family (pointwise.h) ---- */

static const struct { const char *name; int nin; unsigned mask; int bool_out; } pw_ops[] = {
#define PW_ROW(name, nin, mask, bout) {#name, nin, mask, bout},
  LT_CK_PW_ALL_OPS(PW_ROW)
#undef PW_ROW
};

/* one launch of op on a [rows, cols] output from inputs laid out [cols, rows]
** (transposed) or contiguous, input 2 a number when `number` */
static int pw_launch(int op, lt_dtype dt, void *out, void *const *in, int rows, int cols, bool transposed, bool number) {
  lt_ck_pw_call c;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.dtype = dt;
  c.out = out;
  c.p[0].f = 0.75; c.p[0].i = 2;
  c.p[1].f = 1.5; c.p[1].i = 3;
  c.p[2].f = 0.5; c.p[2].i = 1;
  c.mode = 1;
  int nin = pw_ops[op].nin;
  lt_ck_geom g;
  memset(&g, 0, sizeof g);
  g.ndim = 2; g.sizes[0] = rows; g.sizes[1] = cols;
  for (int k = 0; k <= nin; k++) {
    bool tr = transposed && k > 0;
    g.strides[k][0] = tr ? 1 : cols;
    g.strides[k][1] = tr ? rows : 1;
  }
  for (int k = 0; k < nin; k++) c.in[k] = in[k];
  if (number && nin >= 2) {
    c.in[1] = NULL;
    memcpy(c.num[1].bytes, in[1], lt_dtype_size(dt));   /* where's too: its input 2 is of dt */
  }
  return lt_ck_host_pointwise(&c, &g, NULL);
}

/* two results of op equal: exactly for integers and bool, within 4 ulps or a
** relative 1e-12 (float64), 1e-5 (float32), 1e-2 (16-bit) for floats: the
** compiler contracts a*b+c into an FMA in some loops and not others, and
** cancellation (addcmul, gelu's backward) magnifies the difference */
static bool pw_same(int op, lt_dtype dt, const char *a, const char *b, int n) {
  lt_dtype odt = pw_ops[op].bool_out ? LT_BOOL : dt;
  size_t es = lt_dtype_size(odt);
  if (!lt_dtype_is_float(odt)) return memcmp(a, b, (size_t)n * es) == 0;
  double rel = odt == LT_FLOAT64 ? 1e-12 : odt == LT_FLOAT32 ? 1e-5 : 1e-2;
  for (int i = 0; i < n; i++) {
    if (ulps(odt, a + i * es, b + i * es) <= 4) continue;
    double x = lt_dtype_load_double(odt, a + i * es), y = lt_dtype_load_double(odt, b + i * es);
    if (!(fabs(x - y) <= rel * (fabs(x) + fabs(y)))) {
      fprintf(stderr, "  [%d] %.17g vs %.17g\n", i, x, y);
      return false;
    }
  }
  return true;
}

/* every op on every dtype: a kernel exactly where its mask says, and the same
** results on the vectorised, strided, 64-bit and number paths */
TEST(pointwise_paths_and_masks) {
  enum { R = 31, C = 33, N = R * C, PW_BYTES = (N * 8 + 63) / 64 * 64 };   /* aligned_alloc: a multiple of 64 */
  int bad = 0;
  for (int op = 0; op < LT_CK_PW_NUM_OPS; op++) {
    for (int d = 0; d < LT_NUM_REAL_DTYPES; d++) {
      lt_dtype dt = (lt_dtype)d;
      size_t es = lt_dtype_size(dt);
      char *in[3], *tin[3];
      for (int k = 0; k < 3; k++) {
        lt_dtype idt = (op == LT_CK_PW_where && k == 0) ? LT_BOOL : dt;
        size_t is = lt_dtype_size(idt);
        in[k] = aligned_alloc(64, PW_BYTES);
        tin[k] = aligned_alloc(64, PW_BYTES);
        for (int i = 0; i < N; i++) rnd_value(idt, in[k] + i * is);
        /* the transposed copy: tin[k][j * R + i] = in[k][i * C + j] */
        for (int i = 0; i < R; i++)
          for (int j = 0; j < C; j++) memcpy(tin[k] + (j * R + i) * is, in[k] + (i * C + j) * is, is);
      }
      char *o1 = aligned_alloc(64, PW_BYTES), *o2 = aligned_alloc(64, PW_BYTES), *o3 = aligned_alloc(64, PW_BYTES);
      int rc = pw_launch(op, dt, o1, (void *const *)in, R, C, false, false);
      bool want = (pw_ops[op].mask >> d & 1u) != 0;
      if (rc != (want ? LT_CK_OK : LT_CK_EUNSUPPORTED)) {
        if (bad++ < 5) fprintf(stderr, "pointwise %s %s: rc %d\n", pw_ops[op].name, lt_dtype_name(dt), rc);
      } else if (want) {
        CHECK_EQ_INT(pw_launch(op, dt, o2, (void *const *)tin, R, C, true, false), LT_CK_OK);
        lt_ck_host_force_index64(1);
        CHECK_EQ_INT(pw_launch(op, dt, o3, (void *const *)tin, R, C, true, false), LT_CK_OK);
        lt_ck_host_force_index64(0);
        if (!pw_same(op, dt, o1, o2, N) || !pw_same(op, dt, o1, o3, N)) {
          if (bad++ < 5) fprintf(stderr, "pointwise %s %s: the paths differ\n", pw_ops[op].name, lt_dtype_name(dt));
        }
        if (pw_ops[op].nin >= 2) {
          /* input 2 a number: its element 0 everywhere, as a broadcast row of stride 0 */
          char *b0 = aligned_alloc(64, PW_BYTES);
          for (int i = 0; i < N; i++) memcpy(b0 + i * es, in[1], es);
          char *bin[3] = {in[0], b0, in[2]};
          CHECK_EQ_INT(pw_launch(op, dt, o1, (void *const *)bin, R, C, false, false), LT_CK_OK);
          CHECK_EQ_INT(pw_launch(op, dt, o2, (void *const *)in, R, C, false, true), LT_CK_OK);
          if (!pw_same(op, dt, o1, o2, N) && bad++ < 5)
            fprintf(stderr, "pointwise %s %s: the number differs\n", pw_ops[op].name, lt_dtype_name(dt));
          free(b0);
        }
      }
      for (int k = 0; k < 3; k++) { free(in[k]); free(tin[k]); }
      free(o1); free(o2); free(o3);
    }
  }
  CHECK_EQ_INT(bad, 0);
}

/* exact values of ops whose semantics the CPU pins down */
TEST(pointwise_values) {
  lt_ck_geom g;
  memset(&g, 0, sizeof g);
  g.ndim = 1; g.sizes[0] = 4;
  for (int k = 0; k < 4; k++) g.strides[k][0] = 1;
  lt_ck_pw_call c;
  int32_t a[4] = {7, -7, -2147483647 - 1, 5}, b[4] = {2, 2, -1, 0}, o[4];
  int err = 0;
  memset(&c, 0, sizeof c);
  c.dtype = LT_CK_INT32; c.out = o; c.in[0] = a; c.in[1] = b; c.err = &err;
  c.op = LT_CK_PW_div_floor;
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_OK);
  CHECK(o[0] == 3 && o[1] == -4 && o[2] == -2147483647 - 1 && o[3] == 0 && err == 1);
  c.op = LT_CK_PW_remainder; err = 0;
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_OK);
  CHECK(o[0] == 1 && o[1] == 1 && o[2] == 0 && err == 1);
  c.op = LT_CK_PW_fmod; err = 0;
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_OK);
  CHECK(o[0] == 1 && o[1] == -1 && err == 1);
  c.op = LT_CK_PW_shift_left; c.err = NULL;
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_OK);
  CHECK(o[0] == 28 && o[1] == -28 && o[2] == 0 && o[3] == 5);
  c.op = LT_CK_PW_gcd;
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_OK);
  CHECK(o[0] == 1 && o[1] == 1 && o[2] == 1 && o[3] == 5);
  c.op = LT_CK_PW_pow;
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_OK);
  CHECK(o[0] == 49 && o[1] == 49 && o[2] == 0 && o[3] == 1);
  /* where: three inputs, the condition bool, the others a number */
  bool cond[4] = {true, false, true, false};
  float x[4] = {1, 2, 3, 4}, y = -1, fo[4];
  memset(&c, 0, sizeof c);
  c.op = LT_CK_PW_where; c.dtype = LT_CK_FLOAT32; c.out = fo; c.in[0] = cond; c.in[1] = x;
  memcpy(c.num[2].bytes, &y, 4);
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_OK);
  CHECK(fo[0] == 1 && fo[1] == -1 && fo[2] == 3 && fo[3] == -1);
  /* clamp with a NaN bound gives NaN; addcmul of int8 wraps */
  float lo[4] = {0, 0, NAN, 0}, hi[4] = {2, 1, 5, 3};
  c.op = LT_CK_PW_clamp; c.in[0] = x; c.in[1] = lo; c.in[2] = hi;
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_OK);
  CHECK(fo[0] == 1 && fo[1] == 1 && isnan(fo[2]) && fo[3] == 3);
  int8_t i8[4] = {100, 1, -128, 0}, i8o[4];
  memset(&c, 0, sizeof c);
  c.op = LT_CK_PW_addcmul; c.dtype = LT_CK_INT8; c.out = i8o; c.in[0] = i8; c.in[1] = i8; c.in[2] = i8;
  c.p[0].i = 1;
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_OK);
  CHECK(i8o[0] == (int8_t)(100 + 10000) && i8o[1] == 2 && i8o[3] == 0);
  /* bad codes */
  c.op = LT_CK_PW_NUM_OPS;
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_EINVAL);
  c.op = LT_CK_PW_add; c.dtype = LT_CK_NUM_DTYPES;
  CHECK_EQ_INT(lt_ck_host_pointwise(&c, &g, NULL), LT_CK_EINVAL);
  CHECK(lt_ck_host_pw_kernels()->run == lt_ck_host_pointwise);
}

int main(void) {
  lt_init();
  K = lt_ck_host_kernels();
  RUN(table_and_errors);
  RUN(half_to_float_exhaustive);
  RUN(float_to_16bit_rounding);
  RUN(copy_every_pair);
  RUN(fill_every_dtype);
  RUN(unary_ops);
  RUN(binary_ops);
  RUN(in_place);
  RUN(paths_taken);
  RUN(pointwise_paths_and_masks);
  RUN(pointwise_values);
  return ctest_summary();
}
#endif
