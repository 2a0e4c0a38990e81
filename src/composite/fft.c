/*
** fft.c (composite) — the composites of src/ops/fft.lua that need no transform: the
** sample frequencies (fftfreq, rfftfreq), the half-swaps (fftshift, ifftshift: rolls,
** so autograd sees them) and the windows of torch.stft (hann, hamming, blackman,
** bartlett, kaiser). Windows and frequencies are computed in double on the host, then
** rounded once to the dtype asked for and copied to the device: cheap (one value per
** sample) and the same on every backend.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "lt_ops.h"
#include "core/backend.h"
#include "composite/composite.h"


/* a float dtype for a window or a frequency vector: the default when none is given */
static int float_dtype(const char *op, int dtype) {
  lt_dtype dt = dtype < 0 ? lt_get_default_dtype() : (lt_dtype)dtype;
  if (!lt_dtype_is_float(dt)) {
    lt_error("%s: argument 'dtype' must be a floating point dtype, got %s", op, lt_dtype_name(dt));
    return -1;
  }
  return (int)dt;
}

/* a 1-D tensor of dtype dt on device from n doubles computed by fill(v, n, arg) */
static lt_tensor *host_vector(int64_t n, int dt, lt_device device,
                              void (*fill)(double *v, int64_t n, const void *arg), const void *arg) {
  lt_tensor *h = lt_tensor_new(LT_FLOAT64, lt_device_cpu(), 1, &n);
  if (!h) return NULL;
  fill(lt_tensor_data(h), n, arg);
  lt_tensor *r = h;
  if (dt != LT_FLOAT64) {
    r = lt_tensor_clone_as(h, (lt_dtype)dt);
    lt_tensor_release(h);
    if (!r) return NULL;
  }
  if (device.type >= 0 && device.type != LT_DEV_CPU) {
    lt_tensor *dst = lt_empty(lt_intlist_make(&n, 1), dt, device);
    lt_tensor *c = dst ? lt_copy_(dst, r) : NULL;
    lt_tensor_release(c);
    lt_tensor_release(r);
    if (!c) { lt_tensor_release(dst); return NULL; }
    r = dst;
  }
  return r;
}

/* ---- sample frequencies ---- */

typedef struct { int64_t n; double d; bool half; } freqs;

static void fill_freqs(double *v, int64_t count, const void *vp) {
  const freqs *f = vp;
  double scale = 1.0 / ((double)f->n * f->d);
  for (int64_t i = 0; i < count; i++) {
    int64_t k = f->half || i < (f->n + 1) / 2 ? i : i - f->n;
    v[i] = (double)k * scale;
  }
}

static lt_tensor *freq(const char *op, int64_t n, double d, bool half, int dtype, lt_device device) {
  if (n < 0) return lt_error_null("%s: argument 'n' must be non-negative, got %lld", op, (long long)n);
  if (d == 0 || !isfinite(d)) return lt_error_null("%s: argument 'd' must be a finite non-zero spacing, got %g", op, d);
  int dt = float_dtype(op, dtype);
  if (dt < 0) return NULL;
  freqs f = { n, d, half };
  lt_tensor *r = host_vector(half ? n / 2 + 1 - (n == 0) : n, dt, device, fill_freqs, &f);
  return r ? r : lt_composite_fail_as(op);
}

lt_tensor *lt_composite_fft_fftfreq(int64_t n, double d, int dtype, lt_device device) {
  return freq("fft.fftfreq", n, d, false, dtype, device);
}
lt_tensor *lt_composite_fft_rfftfreq(int64_t n, double d, int dtype, lt_device device) {
  return freq("fft.rfftfreq", n, d, true, dtype, device);
}

/* ---- fftshift, ifftshift: a roll by half of each dim's size ---- */

static lt_tensor *shift(const char *op, lt_tensor *self, lt_intlist dim, bool inverse) {
  int64_t dims[LT_MAX_DIMS], shifts[LT_MAX_DIMS];
  int nd = 0;
  if (dim.n < 0) {
    for (int d = 0; d < self->ndim; d++) dims[nd++] = d;
  } else {
    if (dim.n > LT_MAX_DIMS) return lt_error_null("%s: argument 'dim' has too many dims", op);
    for (int i = 0; i < dim.n; i++) {
      int d = lt_wrap_dim(op, dim.v[i], self->ndim < 1 ? 1 : self->ndim);
      if (d < 0) return NULL;
      dims[nd++] = d;
    }
  }
  if (self->ndim == 0 || nd == 0) return lt_clone(self);
  for (int i = 0; i < nd; i++) {
    int64_t n = self->sizes[dims[i]];
    shifts[i] = inverse ? -(n / 2) : n / 2;
  }
  lt_tensor *r = lt_roll(self, lt_intlist_make(shifts, nd), lt_intlist_make(dims, nd));
  return r ? r : lt_composite_fail_as(op);
}

lt_tensor *lt_composite_fft_fftshift(lt_tensor *self, lt_intlist dim) {
  return shift("fft.fftshift", self, dim, false);
}
lt_tensor *lt_composite_fft_ifftshift(lt_tensor *self, lt_intlist dim) {
  return shift("fft.ifftshift", self, dim, true);
}

/* ---- windows ---- */

enum { HANN, HAMMING, BLACKMAN, BARTLETT, KAISER };
typedef struct { int kind; bool periodic; double alpha, beta; } window;

/* the modified Bessel function I0 by its power series (terms (x/2)^2k / k!^2) */
static double bessel_i0(double x) {
  double q = x * x / 4, term = 1, sum = 1;
  for (int k = 1; k < 1000 && term > sum * 1e-17; k++) { term *= q / ((double)k * k); sum += term; }
  return sum;
}

static void fill_window(double *v, int64_t n, const void *vp) {
  const window *w = vp;
  if (n == 1) { v[0] = 1; return; }
  /* a periodic window of n is the symmetric one of n + 1 without its last sample */
  double den = (double)(w->periodic ? n : n - 1);
  for (int64_t k = 0; k < n; k++) {
    double x = 2 * M_PI * (double)k / den;
    switch (w->kind) {
    case HANN: v[k] = 0.5 - 0.5 * cos(x); break;
    case HAMMING: v[k] = w->alpha - w->beta * cos(x); break;
    case BLACKMAN: v[k] = 0.42 - 0.5 * cos(x) + 0.08 * cos(2 * x); break;
    case BARTLETT: v[k] = 1 - fabs(2 * (double)k / den - 1); break;
    default: {
      double r = 2 * (double)k / den - 1;
      v[k] = bessel_i0(w->beta * sqrt(fmax(0, 1 - r * r))) / bessel_i0(w->beta);
    }
    }
  }
}

static lt_tensor *make_window(const char *op, int64_t n, window w, int dtype, lt_device device) {
  if (n < 0)
    return lt_error_null("%s: argument 'window_length' must be non-negative, got %lld", op, (long long)n);
  int dt = float_dtype(op, dtype);
  if (dt < 0) return NULL;
  lt_tensor *r = host_vector(n, dt, device, fill_window, &w);
  return r ? r : lt_composite_fail_as(op);
}

lt_tensor *lt_composite_hann_window(int64_t window_length, bool periodic, int dtype, lt_device device) {
  window w = { HANN, periodic, 0, 0 };
  return make_window("hann_window", window_length, w, dtype, device);
}
lt_tensor *lt_composite_hamming_window(int64_t window_length, bool periodic, double alpha, double beta,
                                       int dtype, lt_device device) {
  window w = { HAMMING, periodic, alpha, beta };
  return make_window("hamming_window", window_length, w, dtype, device);
}
lt_tensor *lt_composite_blackman_window(int64_t window_length, bool periodic, int dtype, lt_device device) {
  window w = { BLACKMAN, periodic, 0, 0 };
  return make_window("blackman_window", window_length, w, dtype, device);
}
lt_tensor *lt_composite_bartlett_window(int64_t window_length, bool periodic, int dtype, lt_device device) {
  window w = { BARTLETT, periodic, 0, 0 };
  return make_window("bartlett_window", window_length, w, dtype, device);
}
lt_tensor *lt_composite_kaiser_window(int64_t window_length, bool periodic, double beta, int dtype,
                                      lt_device device) {
  window w = { KAISER, periodic, 0, beta };
  return make_window("kaiser_window", window_length, w, dtype, device);
}

/* ---- the transforms: argument handling over _fft_c2c, _fft_r2c, _fft_c2r ---- */

enum { C2C, R2C, C2R };

/* norm's name -> the primitives' normalization (0 none, 1 1/sqrt n, 2 1/n), or -1 */
static int norm_mode(const char *op, const char *norm, bool forward) {
  if (!norm || strcmp(norm, "backward") == 0) return forward ? 0 : 2;
  if (strcmp(norm, "forward") == 0) return forward ? 2 : 0;
  if (strcmp(norm, "ortho") == 0) return 1;
  lt_error("%s: argument 'norm' must be \"backward\", \"forward\" or \"ortho\", got \"%s\"", op, norm);
  return -1;
}

/* the real float dtype a real transform computes in */
static lt_dtype real_compute(lt_dtype dt) {
  if (dt == LT_FLOAT64 || dt == LT_FLOAT32) return dt;
  return lt_get_default_dtype() == LT_FLOAT64 ? LT_FLOAT64 : LT_FLOAT32;
}

/* x as the dtype the transform takes: complex (c2c, c2r) or real float (r2c) */
static lt_tensor *input_as(const char *op, lt_tensor *x, int kind) {
  lt_dtype dt = x->dtype, want;
  if (kind == R2C) {
    if (lt_dtype_is_complex(dt))
      return lt_error_null("%s: argument 'self' must be real, got %s (fft takes complex input)", op, lt_dtype_name(dt));
    want = real_compute(dt);
  } else {
    want = lt_dtype_is_complex(dt) ? dt : lt_dtype_to_complex(real_compute(dt));
  }
  if (want == dt) { lt_tensor_retain(x); return x; }
  lt_tensor *r;
  if (kind != R2C) {
    /* real to complex as complex(x, 0): differentiable, the gradient its real part */
    lt_dtype rd = lt_dtype_to_real(want);
    lt_tensor *re = rd == dt ? x : lt_to(x, (int)rd, false);
    lt_tensor *im = re ? lt_zeros_like(re, -1, lt_tensor_device(re)) : NULL;
    r = im ? lt_complex(re, im) : NULL;
    if (re != x) lt_tensor_release(re);
    lt_tensor_release(im);
  } else {
    r = lt_to(x, (int)want, false);
  }
  return r ? r : lt_composite_fail_as(op);
}

/* x with dim d padded with zeros or cut to n; consumes x */
static lt_tensor *resized(const char *op, lt_tensor *x, int d, int64_t n) {
  int64_t m = x->sizes[d];
  lt_tensor *r;
  if (m == n) return x;
  if (m > n) {
    r = lt_narrow(x, d, 0, n);
  } else {
    int64_t sz[LT_MAX_DIMS];
    memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    sz[d] = n - m;
    lt_tensor *z = lt_zeros(lt_intlist_make(sz, x->ndim), x->dtype, lt_tensor_device(x));
    lt_tensor *parts[2] = { x, z };
    r = z ? lt_cat(parts, 2, d) : NULL;
    lt_tensor_release(z);
  }
  lt_tensor_release(x);
  return r ? r : lt_composite_fail_as(op);
}

/* What a transform over several dims does with its arguments. `two`: dims default to
** (-2, -1) (fft2 and kin); `sname`: the argument the sizes came in ('n' or 's'). */
typedef struct {
  const char *op, *sname;
  int kind;
  bool forward, two;
} spec;

static lt_tensor *transform(const spec *sp, lt_tensor *self, lt_intlist s, lt_intlist dim, const char *norm) {
  const char *op = sp->op;
  int mode = norm_mode(op, norm, sp->forward);
  if (mode < 0) return NULL;
  int nd = self->ndim, k = 0;
  int64_t dims[LT_MAX_DIMS], n[LT_MAX_DIMS];
  if (nd == 0) return lt_error_null("%s: argument 'self' must have at least 1 dim, got a 0-d tensor", op);
  if (dim.n >= 0) {
    if (s.n >= 0 && s.n != dim.n)
      return lt_error_null("%s: argument '%s' has %d sizes but 'dim' names %d dims", op, sp->sname, s.n, dim.n);
    for (int i = 0; i < dim.n; i++) {
      int d = lt_wrap_dim(op, dim.v[i], nd);
      if (d < 0) return NULL;
      for (int j = 0; j < k; j++)
        if (dims[j] == d) return lt_error_null("%s: argument 'dim' repeats dim %d", op, d + 1);
      dims[k++] = d;
    }
  } else if (sp->two) {
    if (s.n >= 0 && s.n != 2)
      return lt_error_null("%s: argument 's' has %d sizes for the default 2 dims", op, s.n);
    if (nd < 2) return lt_error_null("%s: argument 'self' must have at least 2 dims, got %d", op, nd);
    dims[k++] = nd - 2; dims[k++] = nd - 1;
  } else if (s.n >= 0) {
    if (s.n > nd) return lt_error_null("%s: argument 's' has %d sizes for a %d-dim tensor", op, s.n, nd);
    for (int i = 0; i < s.n; i++) dims[k++] = nd - s.n + i;
  } else {
    for (int i = 0; i < nd; i++) dims[k++] = i;
  }
  if (k == 0) return lt_error_null("%s: argument 'dim' names no dim to transform", op);
  for (int i = 0; i < k; i++) {
    int64_t m = self->sizes[dims[i]];
    bool last_c2r = sp->kind == C2R && i == k - 1;
    int64_t v = s.n >= 0 ? s.v[i] : -1;
    if (v == -1 || s.n < 0) v = last_c2r ? 2 * (m - 1) : m;
    if (v < 1) {
      if (s.n >= 0 && s.v[i] != -1)
        return lt_error_null("%s: argument '%s' must be at least 1, got %lld", op, sp->sname, (long long)s.v[i]);
      return lt_error_null("%s: dim %d has %lld values, which gives a transform of length %lld: pass '%s' >= 1",
                           op, (int)dims[i] + 1, (long long)m, (long long)v, sp->sname);
    }
    n[i] = v;
  }
  lt_tensor *x = input_as(op, self, sp->kind);
  for (int i = 0; x && i < k; i++)
    x = resized(op, x, (int)dims[i], sp->kind == C2R && i == k - 1 ? n[i] / 2 + 1 : n[i]);
  if (!x) return NULL;
  lt_intlist dl = lt_intlist_make(dims, k);
  lt_tensor *r;
  if (sp->kind == C2C) r = lt__fft_c2c(x, dl, mode, sp->forward);
  else if (sp->kind == R2C) r = lt__fft_r2c(x, dl, mode, sp->forward);
  else r = lt__fft_c2r(x, dl, mode, n[k - 1], sp->forward);
  lt_tensor_release(x);
  return r ? r : lt_composite_fail_as(op);
}

/* the one-dim functions: n and dim as a list of one */
static lt_tensor *transform1(const spec *sp, lt_tensor *self, int64_t n, int64_t dim, const char *norm) {
  int64_t d = dim;
  if (n != LT_NOINT && n < 1)
    return lt_error_null("%s: argument 'n' must be at least 1, got %lld", sp->op, (long long)n);
  return transform(sp, self, lt_intlist_make(&n, n == LT_NOINT ? -1 : 1), lt_intlist_make(&d, 1), norm);
}

#define ONE_DIM(NAME, KIND, FORWARD) \
  lt_tensor *lt_composite_fft_##NAME(lt_tensor *self, int64_t n, int64_t dim, const char *norm) { \
    static const spec sp = { "fft." #NAME, "n", KIND, FORWARD, false }; \
    return transform1(&sp, self, n, dim, norm); \
  }
#define MANY_DIMS(NAME, KIND, FORWARD, TWO) \
  lt_tensor *lt_composite_fft_##NAME(lt_tensor *self, lt_intlist s, lt_intlist dim, const char *norm) { \
    static const spec sp = { "fft." #NAME, "s", KIND, FORWARD, TWO }; \
    return transform(&sp, self, s, dim, norm); \
  }

ONE_DIM(fft, C2C, true)
ONE_DIM(ifft, C2C, false)
ONE_DIM(rfft, R2C, true)
ONE_DIM(irfft, C2R, false)
/* hfft is a forward transform of Hermitian data (c2r forward), ihfft the inverse of real
** data (r2c inverse, the conjugate of rfft) */
ONE_DIM(hfft, C2R, true)
ONE_DIM(ihfft, R2C, false)
MANY_DIMS(fft2, C2C, true, true)
MANY_DIMS(ifft2, C2C, false, true)
MANY_DIMS(rfft2, R2C, true, true)
MANY_DIMS(irfft2, C2R, false, true)
MANY_DIMS(fftn, C2C, true, false)
MANY_DIMS(ifftn, C2C, false, false)
MANY_DIMS(rfftn, R2C, true, false)
MANY_DIMS(irfftn, C2R, false, false)
