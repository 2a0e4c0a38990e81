/*
** fft_ops.c — the CPU kernels of torch.fft's three primitives (src/ops/fft.lua):
** _fft_c2c, _fft_r2c and _fft_c2r, each a transform over a list of dims done as 1-D
** transforms one dim after another on lutorch's FFT engine (fft.h). The first pass
** reads the input in whatever strides it has and writes a new contiguous result; the
** later passes work in place on it. The scale of the norm mode goes in with the last
** pass. Resizing (n, s) and the norm names are the composites' (src/composite/fft.c);
** the checks and result shapes are meta/fft.h's, which the meta device runs too.
*/
#include <math.h>
#include <string.h>
#include "kernels_cpu.h"
#include "core/backend.h"
#include "cpu/cpu.h"
#include "cpu/fft.h"
#include "meta/fft.h"

/* normalization modes, as the composites pass them */
enum { NORM_NONE = 0, NORM_SQRT = 1, NORM_N = 2 };

static int prec_of(lt_dtype dt) {
  return dt == LT_FLOAT64 || dt == LT_COMPLEX128 ? LT_FFT_F64 : LT_FFT_F32;
}

/* The norm's scale of a transform over dims[0..nd) (checked by meta/fft.h): n is the
** product of the signal's lengths, the input's along dims except the last when
** last_len > 0 (c2r: the real result's length there) */
static double norm_scale(const lt_tensor *self, const int *dims, int nd, int64_t normalization, int64_t last_len) {
  double n = 1;
  for (int i = 0; i < nd; i++)
    n *= (double)(i == nd - 1 && last_len > 0 ? last_len : self->sizes[dims[i]]);
  return normalization == NORM_SQRT ? 1 / sqrt(n) : normalization == NORM_N ? 1 / n : 1;
}

/* one 1-D pass along dim d: rows of `in` (ilen elements along d) to rows of `out` */
static int pass(const char *op, const lt_tensor *in, const lt_tensor *out, int d, int64_t n,
                int kind, bool inverse, double scale) {
  lt_fft_geom g;
  memset(&g, 0, sizeof g);
  g.ilen = in->sizes[d];
  g.istride = in->strides[d];
  g.ostride = out->strides[d];
  for (int k = 0; k < out->ndim; k++) {
    if (k == d || out->sizes[k] == 1) continue;
    g.bsize[g.nbatch] = out->sizes[k];
    g.bistride[g.nbatch] = in->strides[k];
    g.bostride[g.nbatch] = out->strides[k];
    g.nbatch++;
  }
  lt_fft_plan *p = lt_fft_plan_get(n, prec_of(out->dtype), kind == LT_FFT_C2C ? LT_FFT_C2C : LT_FFT_R2C);
  int rc = p ? lt_fft_run(p, kind, inverse, lt_tensor_data(in), lt_tensor_data(out), &g, scale) : -1;
  lt_fft_plan_release(p);
  if (rc < 0) lt_error("%s: out of memory for a transform of length %lld", op, (long long)n);
  return rc;
}

static int64_t numel(const lt_tensor *t) {
  int64_t k = 1;
  for (int i = 0; i < t->ndim; i++) k *= t->sizes[i];
  return k;
}

/* c2c passes over dims[0..nd) (all but `skip` when skip >= 0), from src into out */
static int c2c_passes(const char *op, const lt_tensor *src, const lt_tensor *out, const int *dims,
                      int nd, bool inverse, double last_scale) {
  for (int i = 0; i < nd; i++) {
    int d = dims[i];
    if (pass(op, src, out, d, out->sizes[d], LT_FFT_C2C, inverse, i == nd - 1 ? last_scale : 1) < 0)
      return -1;
    src = out;
  }
  return 0;
}

lt_tensor *lt_cpu__fft_c2c(lt_tensor *self, lt_intlist dim, int64_t normalization, bool forward) {
  const char *op = "_fft_c2c";
  int dims[LT_MAX_DIMS];
  int nd = lt_meta_fft_c2c(op, self, dim, normalization, dims);
  if (nd < 0) return NULL;
  double scale = norm_scale(self, dims, nd, normalization, 0);
  lt_tensor *out = lt_tensor_new(self->dtype, lt_tensor_device(self), self->ndim, self->sizes);
  if (!out || numel(out) == 0) return out;
  if (c2c_passes(op, self, out, dims, nd, !forward, scale) < 0) { lt_tensor_release(out); return NULL; }
  return out;
}

lt_tensor *lt_cpu__fft_r2c(lt_tensor *self, lt_intlist dim, int64_t normalization, bool forward) {
  const char *op = "_fft_r2c";
  int dims[LT_MAX_DIMS];
  int64_t sz[LT_MAX_DIMS];
  int nd = lt_meta_fft_r2c(op, self, dim, normalization, dims, sz);
  if (nd < 0) return NULL;
  double scale = norm_scale(self, dims, nd, normalization, 0);
  int last = dims[nd - 1];
  int64_t len = self->sizes[last];
  lt_tensor *out = lt_tensor_new(lt_dtype_to_complex(self->dtype), lt_tensor_device(self), self->ndim, sz);
  if (!out || numel(self) == 0) return out;
  if (pass(op, self, out, last, len, LT_FFT_R2C, !forward, nd == 1 ? scale : 1) < 0 ||
      c2c_passes(op, out, out, dims, nd - 1, !forward, scale) < 0) {
    lt_tensor_release(out);
    return NULL;
  }
  return out;
}

lt_tensor *lt_cpu__fft_c2r(lt_tensor *self, lt_intlist dim, int64_t normalization, int64_t last_dim_size,
                           bool forward) {
  const char *op = "_fft_c2r";
  int dims[LT_MAX_DIMS];
  int64_t sz[LT_MAX_DIMS];
  int nd = lt_meta_fft_c2r(op, self, dim, normalization, last_dim_size, dims, sz);
  if (nd < 0) return NULL;
  double scale = norm_scale(self, dims, nd, normalization, last_dim_size);
  int last = dims[nd - 1];
  lt_tensor *out = lt_tensor_new(lt_dtype_to_real(self->dtype), lt_tensor_device(self), self->ndim, sz);
  if (!out || numel(out) == 0) return out;
  /* the other dims first, into a scratch copy (the input is not ours to write) */
  lt_tensor *half = self;
  if (nd > 1) {
    half = lt_tensor_new(self->dtype, lt_tensor_device(self), self->ndim, self->sizes);
    if (!half || c2c_passes(op, self, half, dims, nd - 1, !forward, 1) < 0) {
      lt_tensor_release(half);
      lt_tensor_release(out);
      return NULL;
    }
  }
  int rc = pass(op, half, out, last, last_dim_size, LT_FFT_C2R, !forward, scale);
  if (half != self) lt_tensor_release(half);
  if (rc < 0) { lt_tensor_release(out); return NULL; }
  return out;
}

/* _fft_halfweight: the frequencies 1 .. n - n/2 - 1 of a half spectrum (those that stand
** for two, k and n - k) times weight; the adjoints of rfft and irfft need it */
lt_tensor *lt_cpu__fft_halfweight(lt_tensor *self, int64_t dim, int64_t n, double weight) {
  const char *op = "_fft_halfweight";
  int d = lt_meta_fft_halfweight(op, self, dim, n);
  if (d < 0) return NULL;
  lt_tensor *out = lt_tensor_new(self->dtype, lt_tensor_device(self), self->ndim, self->sizes);
  if (!out) return NULL;
  if (lt_cpu_copy(out, self) < 0) { lt_tensor_release(out); return NULL; }
  int64_t outer = 1, inner = 1, len = self->sizes[d], hi = n - n / 2 - 1;
  for (int k = 0; k < d; k++) outer *= self->sizes[k];
  for (int k = d + 1; k < self->ndim; k++) inner *= self->sizes[k];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t k = 1; k <= hi; k++) {
      int64_t at = (o * len + k) * inner;
      if (self->dtype == LT_COMPLEX128) {
        lt_complex128 *v = (lt_complex128 *)lt_tensor_data(out) + at;
        for (int64_t i = 0; i < inner; i++) { v[i].re *= weight; v[i].im *= weight; }
      } else {
        lt_complex64 *v = (lt_complex64 *)lt_tensor_data(out) + at;
        for (int64_t i = 0; i < inner; i++) { v[i].re *= (float)weight; v[i].im *= (float)weight; }
      }
    }
  return out;
}
