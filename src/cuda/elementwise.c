/*
** elementwise.c — the CUDA kernels of src/cuda/kernels wired into the backend:
** the same-device copy and fill (called by backend.c), and the elementwise
** ops add, sub, mul, div, neg, abs, exp, relu, sigmoid, tanh with their
** out= forms, named in their declarations (src/ops/elementwise.lua: kernels = { cuda =
** "lt_cuda_add" }); their in-place forms are the generated defaults (the out=
** kernel with out = self, lt_tls_inplace_op set for the errors' NAME_).
**
** Each op does what the CPU's kernel does around its loop (src/cpu/iter.c):
** broadcasting, the result dtype (lt_result_type; integer inputs of div,
** exp, sigmoid, tanh give the default dtype), inputs of another dtype
** converted first with the copy kernel (the kernels take one dtype), a host
** number (a wrapped Lua number, a CPU 0-d tensor) passed by value, and out=:
** written in place when it has the result's dtype and shape and shares memory
** with an input only element for element, else through a temporary copied in.
** Results are contiguous (the CPU's keep a transposed input's layout).
**
** The build that runs is launch.h's choice: the host build under the fake
** driver, the nvcc build on the current stream under a real one. What the
** kernels refuse (LT_CK_EUNSUPPORTED,
** LT_CK_EINVAL: more than 8 dims after merging; div with a rounding mode) runs
** the CPU's kernel under the fake and is an error naming the op under a real
** driver.
**
** Nothing here has run on a GPU: it is tested with the host build under the
** fake driver (tests/lua/test_cuda_fake.lua).
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/kernels/kernels.h"
#include "cuda/launch.h"
#include "dispatch/dispatch.h"
#include "meta/meta.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

/* ---- copy and fill ---- */

static int run_copy(const char *op, int dev, void *dst, int ddt, const int64_t *dst_st, const void *src, int sdt,
                    const int64_t *src_st, int nd, const int64_t *sizes) {
  lt_ck_geom g;
  lt_cuda_geom_init(&g, nd, sizes);
  memcpy(g.strides[0], dst_st, sizeof(int64_t) * (size_t)nd);
  memcpy(g.strides[1], src_st, sizeof(int64_t) * (size_t)nd);
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, dev, lt_cuda_have_device_kernels(), op) < 0) return -1;
  const lt_ck_kernels *k = lt_cuda_ck_kernels(&l);
  int rc = k->copy(dst, ddt, src, sdt, &g, l.stream);
  lt_cuda_launch_end(&l);
  return lt_cuda_launch_result(&l, op, rc, k->error_string);
}

int lt_cuda_ck_copy(const char *op, lt_tensor *dst, const lt_tensor *src, const int64_t *src_st) {
  int dev = lt_tensor_device(dst).index;
  if (dst->storage == src->storage) {
    /* the kernels want operands that alias element for element or not at
    ** all: an overlapping source is read into a temporary first */
    bool refused = false;
    lt_tensor *tmp = lt_cuda_converted(op, src, (lt_dtype)src->dtype, &refused);
    if (!tmp) return refused ? 1 : -1;
    int64_t st[LT_MAX_DIMS];
    int rc = lt_expand_strides(op, tmp, dst->ndim, dst->sizes, st);
    if (rc == 0) rc = run_copy(op, dev, lt_tensor_data(dst), dst->dtype, dst->strides, lt_tensor_data(tmp), tmp->dtype,
                               st, dst->ndim, dst->sizes);
    lt_tensor_release(tmp);
    return rc;
  }
  return run_copy(op, dev, lt_tensor_data(dst), dst->dtype, dst->strides, lt_tensor_data(src), src->dtype, src_st,
                  dst->ndim, dst->sizes);
}

/* v as one element of dtype dt in host memory, converted as the copy kernel does */
static void scalar_to(lt_scalar v, lt_dtype dt, void *out) {
  lt_ck_geom g;
  lt_cuda_geom_init(&g, 0, NULL);
  double f = v.v.f;
  int64_t i = v.v.i;
  unsigned char b = v.v.i != 0;
  if (v.type == LT_SCALAR_FLOAT) (void)lt_ck_host_copy(out, dt, &f, LT_CK_FLOAT64, &g, NULL);
  else if (v.type == LT_SCALAR_BOOL) (void)lt_ck_host_copy(out, dt, &b, LT_CK_BOOL, &g, NULL);
  else (void)lt_ck_host_copy(out, dt, &i, LT_CK_INT64, &g, NULL);
}

int lt_cuda_ck_fill(const char *op, lt_tensor *dst, lt_scalar v) {
  _Alignas(16) unsigned char value[16];
  scalar_to(v, (lt_dtype)dst->dtype, value);
  lt_ck_geom g;
  lt_cuda_geom_init(&g, dst->ndim, dst->sizes);
  memcpy(g.strides[0], dst->strides, sizeof(int64_t) * (size_t)dst->ndim);
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, lt_tensor_device(dst).index, lt_cuda_have_device_kernels(), op) < 0) return -1;
  const lt_ck_kernels *k = lt_cuda_ck_kernels(&l);
  int rc = k->fill(lt_tensor_data(dst), dst->dtype, value, &g, l.stream);
  lt_cuda_launch_end(&l);
  return lt_cuda_launch_result(&l, op, rc, k->error_string);
}

/* ---- the elementwise ops ---- */

#define REFUSED ((lt_tensor *)&refused_marker)
static const int refused_marker;

typedef struct operand {
  lt_tensor *own;            /* a converted copy, released at the end */
  const void *ptr;           /* device data, or NULL for a number */
  int64_t st[LT_MAX_DIMS];
} operand;

/* whether out may be written while x is read: other memory, or the same
** elements in the same order */
static bool may_write(const lt_tensor *out, const lt_tensor *x, const int64_t *xst) {
  if (!x || x->storage != out->storage) return true;
  if (lt_tensor_data(out) != lt_tensor_data(x)) return false;
  for (int d = 0; d < out->ndim; d++)
    if (out->sizes[d] != 1 && out->strides[d] != xst[d]) return false;
  return true;
}

/* Run unary (nin 1, kop a lt_ck_unary_op; kop -1 a copy) or binary (nin 2)
** over ins in dtype dt into out (NULL: a new result). REFUSED when the
** kernels refuse; NULL with the error set. */
static lt_tensor *run_op(const char *op, int nin, int kop, lt_tensor *const *ins, lt_dtype dt, lt_scalar alpha,
                         lt_tensor *out) {
  int64_t shape[LT_MAX_DIMS];
  int nd = ins[0]->ndim;
  memcpy(shape, ins[0]->sizes, sizeof(int64_t) * (size_t)nd);
  if (nin == 2 && (nd = lt_broadcast_shapes(op, ins[0]->ndim, ins[0]->sizes, ins[1]->ndim, ins[1]->sizes, shape)) < 0)
    return NULL;
  int dev = -1;
  for (int k = 0; k < nin; k++)
    if (lt_cuda_on(ins[k])) { dev = lt_tensor_device(ins[k]).index; break; }
  if (dev < 0) return REFUSED;
  if (out) {
    if (!lt_can_cast(dt, (lt_dtype)out->dtype))
      return lt_error_null("%s: result type %s can't be cast to the desired output type %s", op,
                           lt_dtype_traits_table[dt].t7name, lt_dtype_traits_table[out->dtype].t7name);
    bool shared = false;
    for (int k = 0; k < nin; k++) shared |= ins[k]->storage == out->storage;
    bool same = out->ndim == nd && memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0;
    if (!same && !shared && lt_tensor_resize_out(op, out, nd, shape) < 0) return NULL;
  }

  operand o[2] = {{0}, {0}};
  _Alignas(16) unsigned char number[16];
  bool have_number = false, refused = false;
  lt_tensor *res = NULL, *tgt = NULL;
  for (int k = 0; k < nin; k++) {
    lt_tensor *t = ins[k];
    if (!lt_cuda_on(t)) {
      /* a number from the host (a wrapped Lua number, a CPU 0-d tensor): by value */
      if (t->numel != 1 || have_number || nin == 1) { refused = true; goto done; }
      lt_ck_geom g;
      lt_cuda_geom_init(&g, 0, NULL);
      (void)lt_ck_host_copy(number, dt, lt_tensor_data(t), t->dtype, &g, NULL);
      have_number = true;
      continue;
    }
    if (lt_tensor_device(t).index != dev)
      { lt_error("%s: expected all tensors to be on the same device", op); goto done; }
    if (t->dtype != dt && !(o[k].own = lt_cuda_converted(op, t, dt, &refused))) goto done;
    const lt_tensor *u = o[k].own ? o[k].own : t;
    if (lt_expand_strides(op, u, nd, shape, o[k].st) < 0) goto done;
    o[k].ptr = lt_tensor_data(u);
  }

  /* into out when it has the result's dtype and shape and no input overlaps it but in place */
  if (out && out->dtype == dt && out->ndim == nd && memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0) {
    bool ok = true;
    for (int k = 0; k < nin; k++) ok &= o[k].own || !lt_cuda_on(ins[k]) || may_write(out, ins[k], o[k].st);
    if (ok) tgt = out;
  }
  if (!tgt && !(tgt = res = lt_tensor_new(dt, (lt_device){LT_DEV_CUDA, dev}, nd, shape))) goto done;

  if (tgt->numel > 0) {
    lt_ck_geom g;
    lt_cuda_geom_init(&g, nd, shape);
    memcpy(g.strides[0], tgt->strides, sizeof(int64_t) * (size_t)nd);
    for (int k = 0; k < nin; k++) memcpy(g.strides[k + 1], o[k].st, sizeof(int64_t) * (size_t)nd);
    lt_cuda_launch l;
    if (lt_cuda_launch_begin(&l, dev, lt_cuda_have_device_kernels(), op) < 0) goto fail;
    const lt_ck_kernels *kk = lt_cuda_ck_kernels(&l);
    int rc;
    if (kop < 0) rc = kk->copy(lt_tensor_data(tgt), dt, o[0].ptr, dt, &g, l.stream);
    else if (nin == 1) rc = kk->unary(kop, dt, lt_tensor_data(tgt), o[0].ptr, &g, l.stream);
    else {
      lt_ck_scalar al = {0, 0};
      if (alpha.type == LT_SCALAR_FLOAT) { al.f = alpha.v.f; al.i = (int64_t)alpha.v.f; }
      else if (alpha.type != LT_SCALAR_NONE) { al.i = alpha.v.i; al.f = (double)alpha.v.i; }
      else { al.f = 1; al.i = 1; }
      rc = kk->binary(kop, dt, lt_tensor_data(tgt), o[0].ptr, o[1].ptr, have_number ? number : NULL, al, &g,
                       l.stream);
    }
    lt_cuda_launch_end(&l);
    rc = lt_cuda_launch_result(&l, op, rc, kk->error_string);
    if (rc < 0) goto fail;
    if (rc > 0) { refused = true; goto fail; }
  }
  if (out && tgt != out) {   /* out of another dtype or shape, or overlapping: copy the result in */
    if (lt_tensor_resize_out(op, out, nd, shape) < 0 || lt_tensor_copy_(out, res) < 0) goto fail;
    lt_tensor_release(res);
    res = NULL;
  }
  if (out) { lt_tensor_retain(out); res = out; }
  goto done;
fail:
  lt_tensor_release(res);
  res = NULL;
done:
  for (int k = 0; k < nin; k++) lt_tensor_release(o[k].own);
  return refused ? REFUSED : res;
}

static lt_dtype rtype2(lt_tensor *a, lt_tensor *b) {
  if (a->dtype == b->dtype && !(a->is_wrapped_number && b->is_wrapped_number)) return (lt_dtype)a->dtype;
  lt_tensor *ts[2] = {a, b};
  return (lt_dtype)lt_result_type(2, ts);
}

static lt_dtype float_type(lt_dtype dt) { return lt_dtype_is_float(dt) ? dt : lt_get_default_dtype(); }

#define FALLBACK(NAME, ...) LT_CUDA_FALLBACK(NAME, op, dt, __VA_ARGS__)

#define BINARY(NAME, KOP, CHECK)                                                                  \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *other, lt_scalar alpha, lt_tensor *out) { \
    char buf[32];                                                                                 \
    const char *op = lt_cuda_op_name(buf, sizeof buf, #NAME);                                             \
    lt_dtype dt = rtype2(self, other);                                                            \
    CHECK                                                                                         \
    if (lt_meta_check_alpha(op, dt, alpha) < 0) return NULL;                                              \
    lt_tensor *ins[2] = {self, other};                                                            \
    lt_tensor *r = run_op(op, 2, KOP, ins, dt, alpha, out);                                       \
    if (r != REFUSED) return r;                                                                   \
    FALLBACK(NAME, self, other, alpha, out);                                                      \
  }
BINARY(add, LT_CK_ADD, )
BINARY(sub, LT_CK_SUB,
       if (dt == LT_BOOL) return lt_error_null("%s: subtracting bool tensors is not supported; use logical_xor() or the ~ of a mask", op);)

lt_tensor *lt_cuda_mul(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  char buf[32];
  const char *op = lt_cuda_op_name(buf, sizeof buf, "mul");
  lt_dtype dt = rtype2(self, other);
  lt_tensor *ins[2] = {self, other};
  lt_tensor *r = run_op(op, 2, LT_CK_MUL, ins, dt, lt_scalar_none(), out);
  if (r != REFUSED) return r;
  FALLBACK(mul, self, other, out);
}

lt_tensor *lt_cuda_div(lt_tensor *self, lt_tensor *other, const char *rounding_mode, lt_tensor *out) {
  char buf[32];
  const char *op = lt_cuda_op_name(buf, sizeof buf, "div");
  lt_dtype dt = float_type(rtype2(self, other));
  lt_tensor *r = REFUSED;
  if (!rounding_mode) {   /* trunc and floor have no CUDA kernel yet */
    lt_tensor *ins[2] = {self, other};
    r = run_op(op, 2, LT_CK_DIV, ins, dt, lt_scalar_none(), out);
  }
  if (r != REFUSED) return r;
  FALLBACK(div, self, other, rounding_mode, out);
}

/* kind: 0 the same dtype, 1 floating (integers promote to the default dtype) */
#define UNARY(NAME, KOP, PROMOTE, CHECK)                                  \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *out) {            \
    char buf[32];                                                         \
    const char *op = lt_cuda_op_name(buf, sizeof buf, #NAME);                     \
    lt_dtype dt = (lt_dtype)self->dtype;                                  \
    if (PROMOTE) dt = float_type(dt);                                     \
    int kop = KOP;                                                        \
    CHECK                                                                 \
    lt_tensor *r = run_op(op, 1, kop, &self, dt, lt_scalar_none(), out);  \
    if (r != REFUSED) return r;                                           \
    FALLBACK(NAME, self, out);                                            \
  }
UNARY(neg, LT_CK_NEG, 0,
      if (dt == LT_BOOL) return lt_error_null("%s: negation of a bool tensor is not supported; use logical_not() or bitwise_not()", op);)
UNARY(abs, LT_CK_ABS, 0, if (dt == LT_BOOL || dt == LT_UINT8) kop = -1;)
UNARY(relu, LT_CK_RELU, 0,
      if (dt == LT_BOOL) return lt_error_null("%s: not implemented for bool tensors", op);
      if (dt == LT_UINT8) kop = -1;)
UNARY(exp, LT_CK_EXP, 1, )
UNARY(sigmoid, LT_CK_SIGMOID, 1, )
UNARY(tanh, LT_CK_TANH, 1, )
