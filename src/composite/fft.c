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

/* The error slot's message, prefixed with `op` unless it already starts with it. */
static void *fail_as(const char *op) {
  const char *m = lt_error_message();
  size_t n = strlen(op);
  if (!(strncmp(m, op, n) == 0 && m[n] == ':')) {
    char buf[768];
    snprintf(buf, sizeof buf, "%s", m);
    lt_error("%s: %s", op, buf);
  }
  return NULL;
}

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
  return r ? r : fail_as(op);
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
  return r ? r : fail_as(op);
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
  return r ? r : fail_as(op);
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
