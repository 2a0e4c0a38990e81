/*
** fft_run.c — the FFT engine's driver: a batch of strided transforms along one axis,
** rows split over lutorch's thread pool. Each chunk of rows owns its scratch (a row
** buffer and the plan's work), gathers a row into it, transforms and scatters, so any
** strides work and the passes always run on contiguous memory.
*/
#include <stdlib.h>
#include "cpu/fft_impl.h"
#include "cpu/parallel.h"

typedef struct {
  const lt_fft_plan *p;
  int kind;
  bool inverse;
  const char *in;
  char *out;
  const lt_fft_geom *g;
  double scale;
  size_t isz, osz;            /* bytes per input and output element */
  atomic_int failed;
} run_ctx;

static void run_rows(void *vc, int64_t begin, int64_t end) {
  run_ctx *c = vc;
  const lt_fft_plan *p = c->p;
  const lt_fft_geom *g = c->g;
  size_t real = p->prec == LT_FFT_F64 ? sizeof(double) : sizeof(float);
  int64_t nbuf = 2 * (p->n + 1), nwork = 2 * lt_fft_row_work(p);
  void *mem = malloc((size_t)(nbuf + nwork) * real);
  if (!mem) { atomic_store(&c->failed, 1); return; }
  for (int64_t b = begin; b < end; b++) {
    /* the row's offsets from its batch index, last batch dim fastest */
    int64_t io = 0, oo = 0, rest = b;
    for (int d = g->nbatch - 1; d >= 0; d--) {
      int64_t i = rest % g->bsize[d];
      rest /= g->bsize[d];
      io += i * g->bistride[d]; oo += i * g->bostride[d];
    }
    const char *in = c->in + io * (int64_t)c->isz;
    char *out = c->out + oo * (int64_t)c->osz;
    if (p->prec == LT_FFT_F64) {
      double *buf = mem;
      lt_fft_row_f64(p, c->kind, c->inverse, (const double *)in, g->istride, g->ilen,
                     (double *)out, g->ostride, c->scale, buf, buf + nbuf);
    } else {
      float *buf = mem;
      lt_fft_row_f32(p, c->kind, c->inverse, (const float *)in, g->istride, g->ilen,
                     (float *)out, g->ostride, c->scale, buf, buf + nbuf);
    }
  }
  free(mem);
}

int lt_fft_run(const lt_fft_plan *p, int kind, bool inverse, const void *in, void *out,
               const lt_fft_geom *g, double scale) {
  if (p->kind == LT_FFT_C2C) kind = LT_FFT_C2C;
  else if (kind == LT_FFT_C2C) kind = LT_FFT_R2C;
  int64_t rows = 1;
  for (int d = 0; d < g->nbatch; d++) rows *= g->bsize[d];
  if (rows == 0) return 0;
  size_t real = p->prec == LT_FFT_F64 ? sizeof(double) : sizeof(float);
  run_ctx c = { p, kind, inverse, in, out, g, scale,
                kind == LT_FFT_R2C ? real : 2 * real, kind == LT_FFT_C2R ? real : 2 * real };
  atomic_init(&c.failed, 0);
  /* a row costs about 5 n log n flops; a chunk should be worth a thread's start */
  int64_t grain = LT_GRAIN_ELEMENTWISE / (p->n + 1) + 1;
  lt_parallel_for(rows, grain, run_rows, &c);
  return atomic_load(&c.failed) ? -1 : 0;
}

/* the contiguous single transforms */
static int run_one(const lt_fft_plan *p, int kind, bool inverse, const void *in, void *out) {
  lt_fft_geom g = { 0 };
  g.ilen = kind == LT_FFT_C2R ? p->n / 2 + 1 : p->n;
  g.istride = g.ostride = 1;
  return lt_fft_run(p, kind, inverse, in, out, &g, 1.0);
}
int lt_fft_c2c(const lt_fft_plan *p, const void *in, void *out, bool inverse) {
  return run_one(p, LT_FFT_C2C, inverse, in, out);
}
int lt_fft_r2c(const lt_fft_plan *p, const void *in, void *out) {
  return run_one(p, LT_FFT_R2C, false, in, out);
}
int lt_fft_c2r(const lt_fft_plan *p, const void *in, void *out) {
  return run_one(p, LT_FFT_C2R, true, in, out);
}
