/*
** elementwise.c — the CUDA kernels of src/cuda/kernels wired into the backend:
** the same-device copy and fill (called by backend.c), and lt_cuda_pw_run
** (pointwise.h), which runs one op of the pointwise kernel family for the op
** kernels of unary.c and binary.c.
**
** lt_cuda_pw_run does what the CPU's elementwise driver does around its loop
** (src/cpu/iter.c): broadcasting, inputs of another dtype converted first
** with the copy kernel (the kernels take one dtype), a host number (a
** wrapped Lua number, a CPU 0-d tensor) passed by value, and out=: written
** in place when it has the result's dtype and shape and shares memory with
** an input only element for element, else through a temporary copied in.
** Results are contiguous (the CPU's keep a transposed input's layout).
**
** The build that runs is launch.h's choice: the host build under the fake
** driver, the nvcc build on the current stream under a real one. What the
** kernels refuse (LT_CK_EINVAL: more than 8 dims after merging) is
** LT_CUDA_REFUSED, which the op kernels turn into the CPU's kernel under the
** fake and an error naming the op under a real driver.
**
** Nothing here has run on a GPU: it is tested with the host build under the
** fake driver (tests/lua/test_cuda_fake.lua, tests/lua/cuda/test_pointwise.lua).
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/kernels/kernels.h"
#include "cuda/launch.h"
#include "cuda/pointwise.h"
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

/* Complex tensors are copied as their real dtype with a trailing dim of 2
** (re, im): the kernels know only real dtypes, and a same-dtype copy is the
** same bytes either way. Conversions to and from complex are not there yet. */
static int complex_copy(const char *op, int dev, lt_tensor *dst, const lt_tensor *src, const int64_t *src_st) {
  if (dst->dtype != src->dtype)
    return lt_error("%s: %s to %s on cuda is not supported yet", op, lt_dtype_name((lt_dtype)src->dtype),
                    lt_dtype_name((lt_dtype)dst->dtype));
  int nd = dst->ndim;
  if (nd + 1 > LT_MAX_DIMS) return lt_error("%s: cuda: a complex tensor of %d dims not supported yet", op, nd);
  int64_t sizes[LT_MAX_DIMS], dst_st[LT_MAX_DIMS], s_st[LT_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    sizes[d] = dst->sizes[d];
    dst_st[d] = dst->strides[d] * 2;
    s_st[d] = src_st[d] * 2;
  }
  sizes[nd] = 2; dst_st[nd] = 1; s_st[nd] = 1;
  int rdt = (int)lt_dtype_to_real((lt_dtype)dst->dtype);
  return run_copy(op, dev, lt_tensor_data(dst), rdt, dst_st, lt_tensor_data(src), rdt, s_st, nd + 1, sizes);
}

int lt_cuda_ck_copy(const char *op, lt_tensor *dst, const lt_tensor *src, const int64_t *src_st) {
  int dev = lt_tensor_device(dst).index;
  bool cx = lt_dtype_is_complex((lt_dtype)dst->dtype) || lt_dtype_is_complex((lt_dtype)src->dtype);
  if (dst->storage == src->storage) {
    /* the kernels want operands that alias element for element or not at
    ** all: an overlapping source is read into a temporary first */
    bool refused = false;
    lt_tensor *tmp = lt_cuda_converted(op, src, (lt_dtype)src->dtype, &refused);
    if (!tmp) return refused ? 1 : -1;
    int64_t st[LT_MAX_DIMS];
    int rc = lt_expand_strides(op, tmp, dst->ndim, dst->sizes, st);
    if (rc == 0 && cx) rc = complex_copy(op, dev, dst, tmp, st);
    else if (rc == 0) rc = run_copy(op, dev, lt_tensor_data(dst), dst->dtype, dst->strides, lt_tensor_data(tmp), tmp->dtype,
                                    st, dst->ndim, dst->sizes);
    lt_tensor_release(tmp);
    return rc;
  }
  if (cx) return complex_copy(op, dev, dst, src, src_st);
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

static int run_fill(const char *op, int dev, void *data, lt_dtype dt, const int64_t *strides, int nd,
                    const int64_t *sizes, lt_scalar v) {
  _Alignas(16) unsigned char value[16];
  scalar_to(v, dt, value);
  lt_ck_geom g;
  lt_cuda_geom_init(&g, nd, sizes);
  memcpy(g.strides[0], strides, sizeof(int64_t) * (size_t)nd);
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, dev, lt_cuda_have_device_kernels(), op) < 0) return -1;
  const lt_ck_kernels *k = lt_cuda_ck_kernels(&l);
  int rc = k->fill(data, dt, value, &g, l.stream);
  lt_cuda_launch_end(&l);
  return lt_cuda_launch_result(&l, op, rc, k->error_string);
}

int lt_cuda_ck_fill(const char *op, lt_tensor *dst, lt_scalar v) {
  int dev = lt_tensor_device(dst).index;
  if (!lt_dtype_is_complex((lt_dtype)dst->dtype))
    return run_fill(op, dev, lt_tensor_data(dst), (lt_dtype)dst->dtype, dst->strides, dst->ndim, dst->sizes, v);
  /* complex (a real value): the real parts get v, the imaginary parts 0, as
  ** two fills of the real dtype over every other element */
  lt_dtype rdt = lt_dtype_to_real((lt_dtype)dst->dtype);
  int64_t st[LT_MAX_DIMS];
  for (int d = 0; d < dst->ndim; d++) st[d] = dst->strides[d] * 2;
  char *re = lt_tensor_data(dst);
  int rc = run_fill(op, dev, re, rdt, st, dst->ndim, dst->sizes, v);
  if (rc != 0) return rc;
  return run_fill(op, dev, re + lt_dtype_size(rdt), rdt, st, dst->ndim, dst->sizes, lt_scalar_int(0));
}

/* ---- the pointwise ops ---- */

const int lt_cuda_refused_marker;

/* the nvcc build of the family, weakly: NULL without nvcc (launch.c) */
extern const lt_ck_pw_kernels *lt_ck_pw_device_kernels(void) __attribute__((weak));

static const struct { unsigned mask; signed char nin, bool_out; } pw_ops[LT_CK_PW_NUM_OPS] = {
#define PW_ROW(name, nin, mask, bout) [LT_CK_PW_##name] = {mask, nin, bout},
  LT_CK_PW_ALL_OPS(PW_ROW)
#undef PW_ROW
};

bool lt_cuda_pw_has(int kop, lt_dtype dt) { return (pw_ops[kop].mask >> dt & 1u) != 0; }

void lt_cuda_pw_init(lt_cuda_pw *w, const char *op, int kop, lt_dtype dt) {
  memset(w, 0, sizeof *w);
  w->op = op;
  w->kop = kop;
  w->nin = pw_ops[kop].nin;
  w->dt = dt;
  w->rdt = pw_ops[kop].bool_out ? LT_BOOL : dt;
  for (int k = 0; k < 3; k++) w->in_dt[k] = dt;
}

void lt_cuda_pw_param(lt_cuda_pw *w, int k, lt_scalar v) {
  if (v.type == LT_SCALAR_FLOAT) {
    w->p[k].f = v.v.f;
    w->p[k].i = (v.v.f >= -9.2e18 && v.v.f <= 9.2e18) ? (int64_t)v.v.f : 0;
  } else {
    w->p[k].i = v.v.i;
    w->p[k].f = (double)v.v.i;
  }
}

void lt_cuda_pw_paramf(lt_cuda_pw *w, int k, double v) { lt_cuda_pw_param(w, k, lt_scalar_float(v)); }

typedef struct operand {
  lt_tensor *own;            /* a converted copy, released at the end */
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

/* 1 when the kernel's division flag in dev_flag (an int32 on the device) is set */
static int read_flag(lt_tensor *dev_flag) {
  lt_tensor *h = lt_tensor_new(LT_INT32, lt_device_cpu(), 0, NULL);
  if (!h) return -1;
  int r = lt_tensor_copy_(h, dev_flag);
  if (r == 0) r = *(const int32_t *)lt_tensor_data(h) != 0;
  lt_tensor_release(h);
  return r;
}

static int launch(lt_cuda_pw *w, lt_ck_pw_call *c, int dev, int nd, const int64_t *shape, lt_tensor *tgt,
                  const operand *o) {
  lt_ck_geom g;
  lt_cuda_geom_init(&g, nd, shape);
  memcpy(g.strides[0], tgt->strides, sizeof(int64_t) * (size_t)nd);
  for (int k = 0; k < w->nin; k++) memcpy(g.strides[k + 1], o[k].st, sizeof(int64_t) * (size_t)nd);
  c->out = lt_tensor_data(tgt);
  lt_tensor *flag = NULL;
  if (w->div_check && !lt_dtype_is_float(w->dt)) {
    if (!(flag = lt_tensor_new(LT_INT32, (lt_device){LT_DEV_CUDA, dev}, 0, NULL))) return -1;
    if (lt_tensor_fill_(flag, lt_scalar_int(0)) < 0) { lt_tensor_release(flag); return -1; }
    c->err = (int *)lt_tensor_data(flag);
  }
  lt_cuda_launch l;
  int rc = lt_cuda_launch_begin(&l, dev, lt_ck_pw_device_kernels != NULL, w->op);
  if (rc == 0) {
    const lt_ck_pw_kernels *k = l.host ? lt_ck_host_pw_kernels() : lt_ck_pw_device_kernels();
    rc = k->run(c, &g, l.stream);
    lt_cuda_launch_end(&l);
    rc = lt_cuda_launch_result(&l, w->op, rc, lt_cuda_ck_kernels(&l)->error_string);
  }
  if (rc == 0 && flag) {
    int set = read_flag(flag);
    if (set != 0) rc = set < 0 ? -1 : lt_error("%s: integer division by zero", w->op);
  }
  lt_tensor_release(flag);
  return rc;
}

lt_tensor *lt_cuda_pw_run(lt_cuda_pw *w, lt_tensor *out) {
  const char *op = w->op;
  const int nin = w->nin;
  lt_tensor *const *ins = w->in;
  if (!lt_cuda_pw_has(w->kop, w->dt)) return lt_cuda_pw_unsupported(op, w->dt);
  int64_t shape[LT_MAX_DIMS];
  int nd = ins[0]->ndim;
  memcpy(shape, ins[0]->sizes, sizeof(int64_t) * (size_t)nd);
  for (int k = 1; k < nin; k++) {
    if (ins[k]->ndim == nd && memcmp(ins[k]->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0) continue;
    int64_t tmp[LT_MAX_DIMS];
    if ((nd = lt_broadcast_shapes(op, nd, shape, ins[k]->ndim, ins[k]->sizes, tmp)) < 0) return NULL;
    memcpy(shape, tmp, sizeof(int64_t) * (size_t)nd);
  }
  int dev = -1;
  for (int k = 0; k < nin; k++)
    if (lt_cuda_on(ins[k])) { dev = lt_tensor_device(ins[k]).index; break; }
  if (dev < 0) return LT_CUDA_REFUSED;
  if (out) {
    if (!lt_can_cast(w->rdt, (lt_dtype)out->dtype))
      return lt_error_null("%s: result type %s can't be cast to the desired output type %s", op,
                           lt_dtype_traits_table[w->rdt].t7name, lt_dtype_traits_table[out->dtype].t7name);
    bool shared = false;
    for (int k = 0; k < nin; k++) shared |= ins[k]->storage == out->storage;
    bool same = out->ndim == nd && memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0;
    if (!same && !shared && lt_tensor_resize_out(op, out, nd, shape) < 0) return NULL;
  }

  operand o[3];
  memset(o, 0, sizeof o);
  lt_ck_pw_call c;
  memset(&c, 0, sizeof c);
  c.op = w->kop;
  c.dtype = w->dt;
  memcpy(c.p, w->p, sizeof c.p);
  c.mode = w->mode;
  bool refused = false;
  lt_tensor *res = NULL, *tgt = NULL;
  for (int k = 0; k < nin; k++) {
    lt_tensor *t = ins[k];
    lt_dtype want = w->in_dt[k];
    if (!lt_cuda_on(t)) {
      /* a number from the host (a wrapped Lua number, a CPU 0-d tensor): by value */
      if (t->numel != 1) { refused = true; goto done; }
      lt_ck_geom g;
      lt_cuda_geom_init(&g, 0, NULL);
      (void)lt_ck_host_copy(c.num[k].bytes, want, lt_tensor_data(t), t->dtype, &g, NULL);
      continue;
    }
    if (lt_tensor_device(t).index != dev)
      { lt_error("%s: expected all tensors to be on the same device", op); goto done; }
    if (t->dtype != want && !(o[k].own = lt_cuda_converted(op, t, want, &refused))) goto done;
    const lt_tensor *u = o[k].own ? o[k].own : t;
    if (lt_expand_strides(op, u, nd, shape, o[k].st) < 0) goto done;
    c.in[k] = lt_tensor_data(u);
  }

  /* into out when it has the result's dtype and shape and no input overlaps it but in place */
  if (out && out->dtype == w->rdt && out->ndim == nd && memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0) {
    bool ok = true;
    for (int k = 0; k < nin; k++) ok &= o[k].own || !lt_cuda_on(ins[k]) || may_write(out, ins[k], o[k].st);
    if (ok) tgt = out;
  }
  if (!tgt && !(tgt = res = lt_tensor_new(w->rdt, (lt_device){LT_DEV_CUDA, dev}, nd, shape))) goto done;

  if (tgt->numel > 0) {
    int rc = launch(w, &c, dev, nd, shape, tgt, o);
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
  return refused ? LT_CUDA_REFUSED : res;
}

lt_dtype lt_cuda_rtype2(lt_tensor *a, lt_tensor *b) {
  if (a->dtype == b->dtype && !(a->is_wrapped_number && b->is_wrapped_number)) return (lt_dtype)a->dtype;
  lt_tensor *ts[2] = {a, b};
  return (lt_dtype)lt_result_type(2, ts);
}

lt_dtype lt_cuda_float_type(lt_dtype dt) { return lt_dtype_is_float(dt) ? dt : lt_get_default_dtype(); }

lt_tensor *lt_cuda_pw_unsupported(const char *op, lt_dtype dt) {
  return lt_error_null("%s: not implemented for %s tensors", op, lt_dtype_name(dt));
}
