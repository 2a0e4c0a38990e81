/*
** fft_stft.c — torch.stft and torch.istft (src/ops/fft.lua), composites over pad,
** unfold, the window's product, the transforms and index_add (the overlap-add),
** so autograd sees every step. A real signal and window take the real transforms
** (onesided by default); a complex signal or window, or onesided=false, the complex
** one over all n_fft frequencies, as PyTorch.
*/
#include <string.h>
#include "lt_ops.h"
#include "core/backend.h"
#include "composite/composite.h"

/* pad for a real or complex x: pad has no complex kernel, so a complex x is padded
** part by part (real, imag, complex: autograd follows each step) */
static lt_tensor *pad_any(lt_tensor *x, int64_t *pad, const char *mode) {
  if (!lt_dtype_is_complex(x->dtype)) return lt_pad(x, lt_intlist_make(pad, 2), mode, 0);
  lt_tensor *re = lt_real(x), *im = re ? lt_imag(x) : NULL;
  lt_tensor *pr = im ? lt_pad(re, lt_intlist_make(pad, 2), mode, 0) : NULL;
  lt_tensor *pi = pr ? lt_pad(im, lt_intlist_make(pad, 2), mode, 0) : NULL;
  lt_tensor *r = pi ? lt_complex(pr, pi) : NULL;
  lt_tensor_release(re); lt_tensor_release(im); lt_tensor_release(pr); lt_tensor_release(pi);
  return r;
}

/* the window padded with zeros on both sides to n_fft (centred), in dtype dt, or NULL
** with *none set when there is no window at all (every weight 1) */
static lt_tensor *full_window(const char *op, lt_tensor *window, int64_t n_fft, int64_t win_length,
                              int dt, lt_device dev, bool *none) {
  *none = false;
  lt_tensor *w;
  if (window) {
    if (window->ndim != 1 || window->sizes[0] != win_length)
      return lt_error_null("%s: argument 'window' must be 1-D with win_length (%lld) values", op, (long long)win_length);
    if (lt_dtype_is_complex(window->dtype) && !lt_dtype_is_complex(dt))
      return lt_error_null("%s: argument 'window' must be real here, got %s", op, lt_dtype_name(window->dtype));
    w = lt_to(window, dt, false);
  } else if (win_length == n_fft) {
    *none = true;
    return NULL;
  } else {
    w = lt_ones(lt_intlist_make(&win_length, 1), dt, dev);
  }
  if (!w || win_length == n_fft) return w ? w : lt_composite_fail_as(op);
  int64_t left = (n_fft - win_length) / 2, pad[2] = { left, n_fft - win_length - left };
  lt_tensor *p = pad_any(w, pad, "constant");
  lt_tensor_release(w);
  return p ? p : lt_composite_fail_as(op);
}

/* the hop and window length with their defaults, checked */
static int frame_args(const char *op, int64_t n_fft, int64_t *hop, int64_t *win) {
  if (n_fft < 1) { lt_error("%s: argument 'n_fft' must be at least 1, got %lld", op, (long long)n_fft); return -1; }
  if (*hop == LT_NOINT) *hop = n_fft / 4 > 0 ? n_fft / 4 : 1;
  if (*win == LT_NOINT) *win = n_fft;
  if (*hop < 1) { lt_error("%s: argument 'hop_length' must be at least 1, got %lld", op, (long long)*hop); return -1; }
  if (*win < 1 || *win > n_fft) {
    lt_error("%s: argument 'win_length' must be in 1..n_fft (%lld), got %lld", op, (long long)n_fft, (long long)*win);
    return -1;
  }
  return 0;
}

lt_tensor *lt_composite_stft(lt_tensor *self, int64_t n_fft, int64_t hop_length, int64_t win_length,
                             lt_tensor *window, bool center, const char *pad_mode, bool normalized,
                             int onesided, int return_complex) {
  const char *op = "stft";
  if (frame_args(op, n_fft, &hop_length, &win_length) < 0) return NULL;
  if (return_complex == 0)
    return lt_error_null("%s: argument 'return_complex' must be true: the result is complex (as PyTorch 2 requires)", op);
  if (self->ndim != 1 && self->ndim != 2)
    return lt_error_null("%s: argument 'self' must be 1-D (a signal) or 2-D (a batch of signals), got %d dims", op, self->ndim);
  /* a complex signal or window: all n_fft frequencies, through the complex transform */
  bool cx = lt_dtype_is_complex(self->dtype) || (window && lt_dtype_is_complex(window->dtype));
  if (cx && onesided == 1)
    return lt_error_null("%s: onesided=true needs a real signal and a real window (a complex one has no symmetric half)", op);
  bool twosided = cx || onesided == 0;
  /* float32 and float64 (complex64, complex128) as they are; other dtypes in the default float dtype */
  int rdt = lt_dtype_to_real(self->dtype);
  int dt = rdt == LT_FLOAT64 || rdt == LT_FLOAT32 ? rdt : lt_get_default_dtype() == LT_FLOAT64 ? LT_FLOAT64 : LT_FLOAT32;
  if (twosided) dt = lt_dtype_to_complex(dt);
  lt_tensor *x = lt_to(self, lt_dtype_is_complex(self->dtype) ? dt : (int)lt_dtype_to_real(dt), false), *t;
  if (x && self->ndim == 1) { t = lt_unsqueeze(x, 0); lt_tensor_release(x); x = t; }
  if (x && center) {
    int64_t pad[2] = { n_fft / 2, n_fft / 2 };
    t = pad_any(x, pad, pad_mode);
    lt_tensor_release(x); x = t;
  }
  if (!x) return lt_composite_fail_as(op);
  if (x->sizes[1] < n_fft) {
    long long len = (long long)x->sizes[1];
    lt_tensor_release(x);
    return lt_error_null("%s: the signal has %lld samples%s, fewer than n_fft (%lld)", op, len,
                         center ? " after padding" : "", (long long)n_fft);
  }
  lt_tensor *frames = lt_unfold(x, 1, n_fft, hop_length);        /* (B, frames, n_fft) */
  lt_tensor_release(x);
  bool none;
  lt_tensor *w = frames ? full_window(op, window, n_fft, win_length, dt, lt_tensor_device(self), &none) : NULL;
  if (!frames || (!w && !none)) { lt_tensor_release(frames); return lt_composite_fail_as(op); }
  if (w) { t = lt_mul(frames, w); lt_tensor_release(frames); lt_tensor_release(w); frames = t; }
  int64_t last = 2;
  if (frames && twosided && !lt_dtype_is_complex(frames->dtype)) {   /* a real signal, all frequencies */
    t = lt_to(frames, dt, false); lt_tensor_release(frames); frames = t;
  }
  lt_tensor *spec = !frames ? NULL
                  : twosided ? lt__fft_c2c(frames, lt_intlist_make(&last, 1), normalized ? 1 : 0, true)
                  : lt__fft_r2c(frames, lt_intlist_make(&last, 1), normalized ? 1 : 0, true);
  lt_tensor_release(frames);
  t = spec ? lt_transpose(spec, 1, 2) : NULL;                     /* (B, freq, frames) */
  lt_tensor_release(spec);
  if (t && self->ndim == 1) { spec = lt_squeeze(t, 0); lt_tensor_release(t); t = spec; }
  return t ? t : lt_composite_fail_as(op);
}

lt_tensor *lt_composite_istft(lt_tensor *self, int64_t n_fft, int64_t hop_length, int64_t win_length,
                              lt_tensor *window, bool center, bool normalized, int onesided,
                              int64_t length, bool return_complex) {
  const char *op = "istft";
  if (frame_args(op, n_fft, &hop_length, &win_length) < 0) return NULL;
  if (!lt_dtype_is_complex(self->dtype))
    return lt_error_null("%s: argument 'self' must be complex (stft's result), got %s", op, lt_dtype_name(self->dtype));
  if (self->ndim != 2 && self->ndim != 3)
    return lt_error_null("%s: argument 'self' must be 2-D (freq, frames) or 3-D (batch, freq, frames), got %d dims", op, self->ndim);
  int64_t nfreq = self->sizes[self->ndim - 2], nframes = self->sizes[self->ndim - 1];
  if (onesided < 0) onesided = nfreq != n_fft;
  /* return_complex: the complex inverse over all n_fft frequencies (a complex signal);
  ** else a real signal from the first n_fft/2+1, as PyTorch (a two-sided input is cut) */
  if (return_complex && onesided)
    return lt_error_null("%s: return_complex=true needs the two-sided spectrum (onesided=false, n_fft frequencies)", op);
  if (!return_complex && window && lt_dtype_is_complex(window->dtype))
    return lt_error_null("%s: a complex window needs return_complex=true", op);
  int64_t need = onesided ? n_fft / 2 + 1 : n_fft;
  if (nfreq != need)
    return lt_error_null("%s: argument 'self' has %lld frequencies; n_fft = %lld needs %lld (%s)", op,
                         (long long)nfreq, (long long)n_fft, (long long)need, onesided ? "onesided" : "two-sided");
  if (nframes < 1) return lt_error_null("%s: argument 'self' has no frames", op);
  if (length != LT_NOINT && length < 0)
    return lt_error_null("%s: argument 'length' must be non-negative, got %lld", op, (long long)length);
  lt_tensor *X = self, *t;
  lt_tensor_retain(X);
  if (self->ndim == 2) { t = lt_unsqueeze(X, 0); lt_tensor_release(X); X = t; }
  if (X && !return_complex && !onesided) { t = lt_narrow(X, 1, 0, n_fft / 2 + 1); lt_tensor_release(X); X = t; }
  t = X ? lt_transpose(X, 1, 2) : NULL;                          /* (B, frames, freq) */
  lt_tensor_release(X);
  int64_t last = 2;
  lt_tensor *frames = !t ? NULL
                    : return_complex ? lt__fft_c2c(t, lt_intlist_make(&last, 1), normalized ? 1 : 2, false)
                    : lt__fft_c2r(t, lt_intlist_make(&last, 1), normalized ? 1 : 2, n_fft, false);
  lt_tensor_release(t);
  if (!frames) return lt_composite_fail_as(op);
  int dt = frames->dtype;
  lt_device dev = lt_tensor_device(self);
  bool none;
  lt_tensor *w = full_window(op, window, n_fft, win_length, dt, dev, &none);
  if (!w && !none) { lt_tensor_release(frames); return NULL; }
  if (none) w = lt_ones(lt_intlist_make(&n_fft, 1), dt, dev);
  if (!w) { lt_tensor_release(frames); return lt_composite_fail_as(op); }
  /* overlap-add: sample k of frame f lands at f hop + k; index_add's indices are 1-based */
  int64_t B = frames->sizes[0], total = nframes * n_fft, full = n_fft + hop_length * (nframes - 1);
  lt_tensor *idx = lt_tensor_new(LT_INT64, lt_device_cpu(), 1, &total);
  lt_tensor *res = NULL, *sq = NULL, *sqx = NULL, *env = NULL, *y = NULL, *flat = NULL, *z = NULL;
  lt_tensor *zenv = NULL, *devidx = idx;
  if (!idx) goto done;
  int64_t *iv = lt_tensor_data(idx);
  for (int64_t f = 0; f < nframes; f++)
    for (int64_t k = 0; k < n_fft; k++) iv[f * n_fft + k] = f * hop_length + k + 1;
  if (dev.type != LT_DEV_CPU) {
    devidx = lt_empty(lt_intlist_make(&total, 1), LT_INT64, dev);
    lt_tensor *c = devidx ? lt_copy_(devidx, idx) : NULL;
    if (!c) goto done;
    lt_tensor_release(c);
  }
  t = lt_mul(frames, w);
  if (!t) goto done;
  int64_t fs[2] = { B, total }, zs[2] = { B, full };
  flat = lt_reshape(t, lt_intlist_make(fs, 2));
  lt_tensor_release(t);
  z = flat ? lt_zeros(lt_intlist_make(zs, 2), dt, dev) : NULL;
  y = z ? lt_index_add(z, 1, devidx, flat, lt_scalar_int(1)) : NULL;
  /* the window's square, overlap-added the same way, is what each sample was weighted by */
  sq = y ? lt_mul(w, w) : NULL;
  int64_t es[2] = { nframes, n_fft };
  sqx = sq ? lt_expand(sq, lt_intlist_make(es, 2)) : NULL;
  t = sqx ? lt_reshape(sqx, lt_intlist_make(&total, 1)) : NULL;
  zenv = t ? lt_zeros(lt_intlist_make(&full, 1), dt, dev) : NULL;
  env = zenv ? lt_index_add(zenv, 0, devidx, t, lt_scalar_int(1)) : NULL;
  lt_tensor_release(t);
  if (!env) goto done;
  int64_t start = center ? n_fft / 2 : 0, end = center ? full - n_fft / 2 : full;
  if (length != LT_NOINT) end = start + length;
  int64_t have = (end < full ? end : full) - start;
  if (have < 0) have = 0;
  lt_tensor *yn = lt_narrow(y, 1, start, have), *en = yn ? lt_narrow(env, 0, start, have) : NULL;
  /* a complex window's envelope is complex (w^2, as PyTorch): its modulus must stay away from 0;
  ** NOLA is a property of the window's values: on the meta device there are none to check */
  bool check = en && have > 0 && !LT_IS_META(en);
  lt_tensor *ea = check ? (lt_dtype_is_complex(en->dtype) ? lt_abs(en) : (lt_tensor_retain(en), en)) : NULL;
  lt_tensor *mn = ea ? lt_min(ea) : NULL;
  lt_tensor_release(ea);
  if (check) {
    double m = mn ? lt_scalar_to_double(lt_tensor_item(mn)) : 0;
    if (!mn || m < 1e-11) {
      if (mn) lt_error("%s: the window's overlap-add falls to %g somewhere: the window and hop_length fail the NOLA condition (no inverse)", op, m);
      lt_tensor_release(mn); lt_tensor_release(yn); lt_tensor_release(en);
      goto done;
    }
  }
  lt_tensor_release(mn);
  res = en ? lt_div(yn, en, NULL) : NULL;
  lt_tensor_release(yn); lt_tensor_release(en);
  if (res && end - start > have) {                               /* a longer length: zeros */
    int64_t pad[2] = { 0, end - start - have };
    t = pad_any(res, pad, "constant");
    lt_tensor_release(res); res = t;
  }
  if (res && self->ndim == 2) { t = lt_squeeze(res, 0); lt_tensor_release(res); res = t; }
done:
  lt_tensor_release(frames); lt_tensor_release(w);
  if (devidx != idx) lt_tensor_release(devidx);
  lt_tensor_release(idx); lt_tensor_release(flat); lt_tensor_release(z); lt_tensor_release(y);
  lt_tensor_release(sq); lt_tensor_release(sqx); lt_tensor_release(zenv); lt_tensor_release(env);
  return res ? res : lt_composite_fail_as(op);
}
