/*
** fft.h — lutorch's own FFT engine: the public face of fft_plan.c, fft_kernels.c and
** fft_run.c. Plain C11, no tensors and no Lua: buffers in, buffers out.
**
** Why our own: FFTW is GPL (it may not go into the MIT liblutorch), Debian 12's kissfft
** ships only a float build and is O(n^2) on large prime factors, and pocketfft is not
** packaged there. The engine does complex transforms of every length n in float32 and
** float64 on interleaved (re, im) buffers:
**   - n whose prime factors are all small: a mixed-radix Stockham transform (radix 4,
**     2, 3, 5, 7 butterflies and a generic odd one up to LT_FFT_MAX_RADIX), one pass per
**     factor between two buffers, twiddles precomputed in the plan;
**   - n with a larger prime factor: Bluestein's chirp-z, a convolution done with a
**     smooth transform of length m >= 2n-1, so every n costs O(n log n).
** Real transforms give (r2c) or take (c2r) the n/2+1 non-redundant outputs: even n
** through a complex transform of n/2 (the two halves packed as re and im), odd n through
** a complex transform of n.
**
** All transforms are unnormalised: forward is X[k] = sum_t x[t] e^{-2 pi i tk/n}, inverse
** has e^{+...}; lt_fft_run multiplies by a scale (the caller's norm) as it writes.
*/
#ifndef LT_FFT_H
#define LT_FFT_H

#include <stdbool.h>
#include <stdint.h>

enum { LT_FFT_F32, LT_FFT_F64 };          /* element precision */
enum { LT_FFT_C2C, LT_FFT_R2C, LT_FFT_C2R }; /* what a plan is for */

/* largest prime factor the mixed-radix path takes; above it, Bluestein */
#define LT_FFT_MAX_RADIX 61
/* how many plans the cache keeps (least recently used go first) */
#define LT_FFT_CACHE_SIZE 32
/* most batch dims lt_fft_run takes */
#define LT_FFT_MAX_DIMS 16

typedef struct lt_fft_plan lt_fft_plan;

/* A plan for transforms of length n (n >= 1) of kind LT_FFT_C2C, or LT_FFT_R2C/C2R
** (one plan serves both real directions; pass either). From the cache when there;
** otherwise made and cached. Returns a new reference (release it), or NULL when memory
** ran out or n < 1. Safe to call from several threads at once. */
lt_fft_plan *lt_fft_plan_get(int64_t n, int prec, int kind);
void lt_fft_plan_release(lt_fft_plan *p);
/* A plan made outside the cache (tests; lt_fft_plan_get is what callers want). */
lt_fft_plan *lt_fft_plan_new(int64_t n, int prec, int kind);
/* drop every cached plan (those still held stay alive until released) */
void lt_fft_cache_clear(void);
/* how many plans the cache holds now */
int lt_fft_cache_count(void);
/* true when the plan (or, for a real plan, its complex one) uses Bluestein's algorithm */
bool lt_fft_plan_bluestein(const lt_fft_plan *p);

/*
** One transform on contiguous interleaved buffers, in the plan's precision (float or
** double pointers). c2c: in and out hold n complex numbers; r2c: in n reals, out n/2+1
** complex; c2r: in n/2+1 complex (the imaginary parts of the zero and, for even n, the
** n/2 frequency are ignored), out n reals. in and out may be the same buffer for c2c.
** Unnormalised. 0, or -1 when memory ran out.
*/
int lt_fft_c2c(const lt_fft_plan *p, const void *in, void *out, bool inverse);
int lt_fft_r2c(const lt_fft_plan *p, const void *in, void *out);
int lt_fft_c2r(const lt_fft_plan *p, const void *in, void *out);   /* the inverse */

/*
** A batch of strided transforms along one axis. Strides and offsets count elements (a
** complex element is two reals): for c2c both sides are complex; for r2c the input is
** real and the output complex; for c2r the reverse. Each transform reads `ilen`
** elements of its input row (the row the transform wants is n complex, n reals, or n/2+1
** complex; a shorter row is padded with zeros, a longer one is cut), and writes the full
** output row (n, n/2+1 or n), each element times `scale`.
*/
typedef struct {
  int64_t ilen;                 /* elements of each input row */
  int64_t istride, ostride;     /* along the transform */
  int nbatch;                   /* batch dims (0: a single transform) */
  int64_t bsize[LT_FFT_MAX_DIMS], bistride[LT_FFT_MAX_DIMS], bostride[LT_FFT_MAX_DIMS];
} lt_fft_geom;

/* Runs the batch on lutorch's thread pool (rows in parallel). The kind is the plan's
** for c2c; for a real plan, LT_FFT_R2C or LT_FFT_C2R says which way. `inverse` picks
** the sign of the exponent: for r2c, true gives the inverse transform of the real rows
** (the conjugate of the forward one); c2r is normally inverse, and false gives the
** forward transform of the Hermitian rows (that of the conjugate input). 0, or -1 when
** memory ran out (nothing is reported through lt_error here; the caller words it). */
int lt_fft_run(const lt_fft_plan *p, int kind, bool inverse, const void *in, void *out,
               const lt_fft_geom *g, double scale);

#endif
