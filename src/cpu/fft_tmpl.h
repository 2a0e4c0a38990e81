/*
** fft_tmpl.h — the FFT engine's arithmetic, written once for both precisions:
** fft_kernels.c includes it with R (float or double) and S(name) (name with the
** precision's suffix) defined. The Stockham passes, Bluestein's convolution, the
** real-data packing and one strided row (gather, transform, scatter).
**
** A pass of radix p over data of s interleaved sequences of length p*m (stride s)
** reads, for each j < m and q < s, a_r = x[q + s(j + rm)], r < p, forms their p-point
** DFT b_k and writes b_k times the twiddle e^{-2 pi i jk/(pm)} to y[q + s(pj + k)]:
** decimation in frequency, and the output is already in natural order (autosort), so
** there is no bit reversal. Data is interleaved (re, im); the loops keep re and im in
** separate scalars so the compiler keeps them in registers and vectorises the q loop.
*/

/* the radix-2 pass */
static void S(pass2)(int64_t m, int64_t s, const R *restrict x, R *restrict y,
                     const R *restrict tw) {
  for (int64_t j = 0; j < m; j++) {
    const R wr = tw[2*j], wi = tw[2*j + 1];
    const R *x0 = x + 2*s*j, *x1 = x + 2*s*(j + m);
    R *y0 = y + 2*s*(2*j), *y1 = y0 + 2*s;
    for (int64_t q = 0; q < s; q++) {
      R ar = x0[2*q], ai = x0[2*q + 1], br = x1[2*q], bi = x1[2*q + 1];
      y0[2*q] = ar + br; y0[2*q + 1] = ai + bi;
      R dr = ar - br, di = ai - bi;
      y1[2*q] = dr*wr - di*wi; y1[2*q + 1] = dr*wi + di*wr;
    }
  }
}

/* the radix-4 pass: e^{-2 pi i/4} = -i, so the butterfly itself has no multiplies */
static void S(pass4)(int64_t m, int64_t s, const R *restrict x, R *restrict y,
                     const R *restrict tw) {
  for (int64_t j = 0; j < m; j++) {
    const R *w = tw + 6*j;
    const R w1r = w[0], w1i = w[1], w2r = w[2], w2i = w[3], w3r = w[4], w3i = w[5];
    const R *x0 = x + 2*s*j, *x1 = x + 2*s*(j + m), *x2 = x + 2*s*(j + 2*m),
            *x3 = x + 2*s*(j + 3*m);
    R *y0 = y + 2*s*(4*j), *y1 = y0 + 2*s, *y2 = y1 + 2*s, *y3 = y2 + 2*s;
    for (int64_t q = 0; q < s; q++) {
      R a0r = x0[2*q], a0i = x0[2*q + 1], a1r = x1[2*q], a1i = x1[2*q + 1];
      R a2r = x2[2*q], a2i = x2[2*q + 1], a3r = x3[2*q], a3i = x3[2*q + 1];
      R t0r = a0r + a2r, t0i = a0i + a2i, t1r = a0r - a2r, t1i = a0i - a2i;
      R t2r = a1r + a3r, t2i = a1i + a3i;
      R t3r = a1i - a3i, t3i = a3r - a1r;          /* (a1 - a3) * -i */
      R b1r = t1r + t3r, b1i = t1i + t3i, b2r = t0r - t2r, b2i = t0i - t2i;
      R b3r = t1r - t3r, b3i = t1i - t3i;
      y0[2*q] = t0r + t2r; y0[2*q + 1] = t0i + t2i;
      y1[2*q] = b1r*w1r - b1i*w1i; y1[2*q + 1] = b1r*w1i + b1i*w1r;
      y2[2*q] = b2r*w2r - b2i*w2i; y2[2*q + 1] = b2r*w2i + b2i*w2r;
      y3[2*q] = b3r*w3r - b3i*w3i; y3[2*q + 1] = b3r*w3i + b3i*w3r;
    }
  }
}

/* An odd radix p: the inputs pair up as a_r +- a_{p-r}, which halves the multiplies;
** b_k and b_{p-k} share the cosine sums and differ in the sign of the sine sums.
** Inlined with a constant p (3, 5, 7) the loops over r and k unroll into straight code;
** the generic call takes any odd p up to LT_FFT_MAX_RADIX. rt[t] = e^{-2 pi i t/p}. */
static inline __attribute__((always_inline))
void S(passodd)(int p, int64_t m, int64_t s, const R *restrict x, R *restrict y,
                const R *restrict tw, const R *restrict rt) {
  const int h = (p - 1) / 2;
  R sr[LT_FFT_MAX_RADIX / 2 + 1], si[LT_FFT_MAX_RADIX / 2 + 1];
  R dr[LT_FFT_MAX_RADIX / 2 + 1], di[LT_FFT_MAX_RADIX / 2 + 1];
  R br[LT_FFT_MAX_RADIX], bi[LT_FFT_MAX_RADIX];
  for (int64_t j = 0; j < m; j++) {
    const R *w = tw + 2*(p - 1)*j;
    for (int64_t q = 0; q < s; q++) {
      const R *xq = x + 2*(q + s*j);
      R a0r = xq[0], a0i = xq[1], b0r = a0r, b0i = a0i;
      for (int r = 1; r <= h; r++) {
        const R *u = xq + 2*s*m*r, *v = xq + 2*s*m*(p - r);
        sr[r] = u[0] + v[0]; si[r] = u[1] + v[1];
        dr[r] = u[0] - v[0]; di[r] = u[1] - v[1];
        b0r += sr[r]; b0i += si[r];
      }
      for (int k = 1; k <= h; k++) {
        R cr = a0r, ci = a0i, er = 0, ei = 0;
        int t = 0;
        for (int r = 1; r <= h; r++) {
          t += k; if (t >= p) t -= p;               /* t = rk mod p */
          cr += sr[r]*rt[2*t]; ci += si[r]*rt[2*t];
          er += dr[r]*rt[2*t + 1]; ei += di[r]*rt[2*t + 1];
        }
        /* the sine sum e carries e^{-i...}'s imaginary part; times i it joins */
        br[k] = cr - ei; bi[k] = ci + er;
        br[p - k] = cr + ei; bi[p - k] = ci - er;
      }
      R *yq = y + 2*(q + s*p*j);
      yq[0] = b0r; yq[1] = b0i;
      for (int k = 1; k < p; k++) {
        R wr = w[2*(k - 1)], wi = w[2*(k - 1) + 1];
        yq[2*s*k] = br[k]*wr - bi[k]*wi; yq[2*s*k + 1] = br[k]*wi + bi[k]*wr;
      }
    }
  }
}

static void S(pass3)(int64_t m, int64_t s, const R *x, R *y, const R *tw, const R *rt) {
  S(passodd)(3, m, s, x, y, tw, rt);
}
static void S(pass5)(int64_t m, int64_t s, const R *x, R *y, const R *tw, const R *rt) {
  S(passodd)(5, m, s, x, y, tw, rt);
}
static void S(pass7)(int64_t m, int64_t s, const R *x, R *y, const R *tw, const R *rt) {
  S(passodd)(7, m, s, x, y, tw, rt);
}
static __attribute__((noinline))
void S(passgen)(int p, int64_t m, int64_t s, const R *x, R *y, const R *tw, const R *rt) {
  S(passodd)(p, m, s, x, y, tw, rt);
}

static R *S(exec)(const lt_fft_plan *p, R *buf, R *work);

/* Bluestein: jk = (j^2 + k^2 - (k-j)^2)/2 turns the DFT into c_k (a * conj c)_k with
** c_t = e^{-pi i t^2/n} and a_j = x_j c_j, a convolution done as a circular one of the
** smooth length m >= 2n-1. The inverse transform of the product is the forward one
** between two conjugations. work: a (m complex) and the sub-transform's scratch (m). */
static R *S(bluestein)(const lt_fft_plan *p, R *buf, R *work) {
  const int64_t n = p->n, m = p->m;
  const R *c = p->chirp, *bf = p->bfft;
  R *a = work, *w2 = work + 2*m;
  for (int64_t k = 0; k < n; k++) {
    R xr = buf[2*k], xi = buf[2*k + 1], cr = c[2*k], ci = c[2*k + 1];
    a[2*k] = xr*cr - xi*ci; a[2*k + 1] = xr*ci + xi*cr;
  }
  for (int64_t k = 2*n; k < 2*m; k++) a[k] = 0;
  R *r = S(exec)(p->sub, a, w2);
  for (int64_t k = 0; k < m; k++) {
    R xr = r[2*k], xi = r[2*k + 1], br = bf[2*k], bi = bf[2*k + 1];
    r[2*k] = xr*br - xi*bi; r[2*k + 1] = -(xr*bi + xi*br);
  }
  R *r2 = S(exec)(p->sub, r, r == a ? w2 : a);
  for (int64_t k = 0; k < n; k++) {
    R xr = r2[2*k], xi = -r2[2*k + 1], cr = c[2*k], ci = c[2*k + 1];
    buf[2*k] = xr*cr - xi*ci; buf[2*k + 1] = xr*ci + xi*cr;
  }
  return buf;
}

/* The forward complex transform of buf (n complex); work holds p->nwork complex.
** Returns buf or work, whichever holds the result. */
static R *S(exec)(const lt_fft_plan *p, R *buf, R *work) {
  if (p->sub) return S(bluestein)(p, buf, work);
  R *src = buf, *dst = work;
  for (int i = 0; i < p->npass; i++) {
    const lt_fft_pass *ps = &p->pass[i];
    switch (ps->p) {
    case 2: S(pass2)(ps->m, ps->s, src, dst, ps->tw); break;
    case 4: S(pass4)(ps->m, ps->s, src, dst, ps->tw); break;
    case 3: S(pass3)(ps->m, ps->s, src, dst, ps->tw, ps->rt); break;
    case 5: S(pass5)(ps->m, ps->s, src, dst, ps->tw, ps->rt); break;
    case 7: S(pass7)(ps->m, ps->s, src, dst, ps->tw, ps->rt); break;
    default: S(passgen)(ps->p, ps->m, ps->s, src, dst, ps->tw, ps->rt); break;
    }
    R *t = src; src = dst; dst = t;
  }
  return src;
}

void S(lt_fft_row)(const lt_fft_plan *p, int kind, bool inverse, const R *in,
                   int64_t is, int64_t ilen, R *out, int64_t os, double scale,
                   R *buf, R *work) {
  const int64_t n = p->n;
  const R sc = (R)scale;
  if (kind == LT_FFT_C2C) {
    /* the inverse is the forward transform between two conjugations */
    const R sg = inverse ? -1 : 1;
    int64_t nr = ilen < n ? ilen : n;
    for (int64_t t = 0; t < nr; t++) {
      buf[2*t] = in[2*t*is]; buf[2*t + 1] = sg*in[2*t*is + 1];
    }
    for (int64_t t = 2*nr; t < 2*n; t++) buf[t] = 0;
    const R *r = S(exec)(p, buf, work);
    for (int64_t k = 0; k < n; k++) {
      out[2*k*os] = sc*r[2*k]; out[2*k*os + 1] = sg*sc*r[2*k + 1];
    }
  } else if (kind == LT_FFT_R2C) {
    /* the inverse transform of real data is the conjugate of the forward one */
    const R sgi = inverse ? -sc : sc;
    int64_t nr = ilen < n ? ilen : n;
    if (n % 2 == 0) {
      /* x as n/2 complex z_t = x_2t + i x_2t+1; Z's even and odd halves E and O come
      ** back out as E_k = (Z_k + conj Z_{h-k})/2, O_k = (Z_k - conj Z_{h-k})/2i */
      const int64_t h = n / 2;
      for (int64_t t = 0; t < nr; t++) buf[t] = in[t*is];
      for (int64_t t = nr; t < n; t++) buf[t] = 0;
      const R *z = S(exec)(p->cplx, buf, work);
      const R *w = p->rtw;
      for (int64_t k = 0; k <= h; k++) {
        int64_t k1 = k == h ? 0 : k, k2 = k == 0 ? 0 : h - k;
        R zr = z[2*k1], zi = z[2*k1 + 1], cr = z[2*k2], ci = -z[2*k2 + 1];
        R er = (zr + cr)*(R)0.5, ei = (zi + ci)*(R)0.5;
        R or_ = (zi - ci)*(R)0.5, oi = (cr - zr)*(R)0.5;
        R wr = w[2*k], wi = w[2*k + 1];
        out[2*k*os] = sc*(er + or_*wr - oi*wi);
        out[2*k*os + 1] = sgi*(ei + or_*wi + oi*wr);
      }
    } else {
      for (int64_t t = 0; t < nr; t++) { buf[2*t] = in[t*is]; buf[2*t + 1] = 0; }
      for (int64_t t = 2*nr; t < 2*n; t++) buf[t] = 0;
      const R *r = S(exec)(p->cplx, buf, work);
      for (int64_t k = 0; k <= n / 2; k++) {
        out[2*k*os] = sc*r[2*k]; out[2*k*os + 1] = sgi*r[2*k + 1];
      }
    }
  } else {
    /* c2r is an inverse transform; the forward one is that of the conjugate input */
    const R sgi = inverse ? 1 : -1;
    const int64_t nh = n / 2 + 1;
    int64_t nr = ilen < nh ? ilen : nh;
    if (n % 2 == 0) {
      /* rebuild Z_k = E_k + i O_k from X_k and conj X_{h-k} (twice over: the inverse of
      ** length h gives h z, and we want n x), conjugated for the forward transform */
      const int64_t h = n / 2;
      for (int64_t k = 0; k < nr; k++) {
        buf[2*k] = in[2*k*is]; buf[2*k + 1] = sgi*in[2*k*is + 1];
      }
      for (int64_t k = 2*nr; k < 2*nh; k++) buf[k] = 0;
      buf[1] = 0; buf[2*h + 1] = 0;
      const R *w = p->rtw;
      for (int64_t k = 0; k <= h - k; k++) {
        int64_t l = h - k;
        R xr = buf[2*k], xi = buf[2*k + 1], yr = buf[2*l], yi = buf[2*l + 1];
        /* Z'_k from X_k and conj X_l; Z'_l from X_l and conj X_k */
        R er = xr + yr, ei = xi - yi, dr = xr - yr, di = xi + yi;
        R wr = w[2*k], wi = -w[2*k + 1];
        R or_ = dr*wr - di*wi, oi = dr*wi + di*wr;
        buf[2*k] = er - oi; buf[2*k + 1] = -(ei + or_);
        if (l != k && l != h) {
          R fr = yr + xr, fi = yi - xi, gr = yr - xr, gi = yi + xi;
          R vr = w[2*l], vi = -w[2*l + 1];
          R pr = gr*vr - gi*vi, pi = gr*vi + gi*vr;
          buf[2*l] = fr - pi; buf[2*l + 1] = -(fi + pr);
        }
      }
      const R *r = S(exec)(p->cplx, buf, work);
      for (int64_t t = 0; t < h; t++) {
        out[2*t*os] = sc*r[2*t]; out[(2*t + 1)*os] = -sc*r[2*t + 1];
      }
    } else {
      /* the full Hermitian spectrum, conjugated; the real part of the forward transform
      ** is the real part of the inverse */
      for (int64_t t = 0; t < 2*n; t++) buf[t] = 0;
      for (int64_t k = 0; k < nr; k++) {
        R xr = in[2*k*is], xi = sgi*in[2*k*is + 1];
        buf[2*k] = xr; buf[2*k + 1] = -xi;
        if (k > 0) { buf[2*(n - k)] = xr; buf[2*(n - k) + 1] = xi; }
      }
      buf[1] = 0;
      const R *r = S(exec)(p->cplx, buf, work);
      for (int64_t t = 0; t < n; t++) out[t*os] = sc*r[2*t];
    }
  }
}

R *S(lt_fft_exec)(const lt_fft_plan *p, R *buf, R *work) { return S(exec)(p, buf, work); }
