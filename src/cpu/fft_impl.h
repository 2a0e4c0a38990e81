/*
** fft_impl.h — the FFT engine's insides, shared by fft_plan.c (building plans),
** fft_kernels.c (the passes, Bluestein, the real-data packing) and fft_run.c (the
** batched, strided driver). Private to the engine: callers use fft.h.
*/
#ifndef LT_FFT_IMPL_H
#define LT_FFT_IMPL_H

#include <stdatomic.h>
#include "cpu/fft.h"

/* the most passes a plan has: one per prime factor (radix-4 passes take two) */
#define LT_FFT_MAX_PASSES 64

/* One Stockham pass: the current length p*m splits into p interleaved sequences of m.
** Data before the pass is s independent sequences of length p*m, interleaved with
** stride s; after it, s*p sequences of length m. */
typedef struct {
  int p;
  int64_t m, s;
  void *tw;     /* (p-1)*m complex twiddles e^{-2 pi i jk/(pm)}, j-major */
  void *rt;     /* p complex roots e^{-2 pi i t/p}, for the odd radices above 3 */
} lt_fft_pass;

struct lt_fft_plan {
  atomic_int refs;
  int64_t n;
  int prec, kind;
  int64_t nwork;              /* complex scratch elements the c2c exec needs */
  /* c2c, mixed radix */
  int npass;
  lt_fft_pass pass[LT_FFT_MAX_PASSES];
  /* c2c, Bluestein: a smooth transform of length m over the chirp e^{-pi i k^2/n} */
  int64_t m;
  lt_fft_plan *sub;           /* c2c plan of length m (owned) */
  void *chirp;                /* n complex */
  void *bfft;                 /* m complex: the transformed conjugate chirp, over m */
  /* real: a c2c plan of n/2 (even n) or n (odd n), and e^{-2 pi i k/n}, k <= n/2 */
  lt_fft_plan *cplx;
  void *rtw;
};

/* the complex scratch a row of this plan needs beside its n (+1) complex buffer */
int64_t lt_fft_row_work(const lt_fft_plan *p);

/* One row, strided, in the plan's precision: read ilen elements of in (stride is),
** zero-pad or cut, transform, write the output row (stride os) times scale. buf holds
** n + 1 complex, work lt_fft_row_work(p) complex, both of the plan's precision. */
void lt_fft_row_f32(const lt_fft_plan *p, int kind, bool inverse, const float *in,
                    int64_t is, int64_t ilen, float *out, int64_t os, double scale,
                    float *buf, float *work);
void lt_fft_row_f64(const lt_fft_plan *p, int kind, bool inverse, const double *in,
                    int64_t is, int64_t ilen, double *out, int64_t os, double scale,
                    double *buf, double *work);

/* the forward c2c transform of buf (n complex) with work (p->nwork complex); returns
** whichever of the two holds the result */
float *lt_fft_exec_f32(const lt_fft_plan *p, float *buf, float *work);
double *lt_fft_exec_f64(const lt_fft_plan *p, double *buf, double *work);

#endif
