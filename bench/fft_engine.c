/*
** fft_engine.c — the FFT engine (src/cpu/fft.h) timed by itself, without the op layer:
** c2c and r2c of 2^20 and of the prime 1000003 in float64 and float32, one thread, the
** median of REPS runs after a warm-up (the plan is made, and cached, before timing), in
** process CPU time like the other two sides (pinned to one core, other load then counts
** less).
** Built and run by bench/fft.sh; prints "engine KIND PREC N MS" lines.
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "cpu/fft.h"
#include "cpu/parallel.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 7;
  static const long ns[] = { 1L << 20, 1000003 };
  lt_set_num_threads(1);
  for (int prec = LT_FFT_F64; prec >= LT_FFT_F32; prec--)
    for (int i = 0; i < 2; i++) {
      long n = ns[i];
      double *x = malloc(16 * (size_t)n + 16), *y = malloc(16 * (size_t)n + 16);
      for (long j = 0; j < 2 * n; j++) x[j] = (double)(j % 7) - 3;   /* any values: no branches */
      for (int real = 0; real <= 1; real++) {
        lt_fft_plan *p = lt_fft_plan_get(n, prec, real ? LT_FFT_R2C : LT_FFT_C2C);
        double ts[64];
        if (reps > 63) reps = 63;
        for (int r = 0; r <= reps; r++) {
          double t = now();
          if (real) lt_fft_r2c(p, x, y); else lt_fft_c2c(p, x, y, false);
          ts[r] = now() - t;                 /* ts[0], the warm-up, is left out */
        }
        qsort(ts + 1, (size_t)reps, sizeof(double), cmp_double);
        double best = ts[1 + (reps - 1) / 2];
        printf("engine %s %s %ld %.2f\n", real ? "rfft" : "fft", prec == LT_FFT_F64 ? "float64" : "float32",
               n, best * 1e3);
        lt_fft_plan_release(p);
      }
      free(x); free(y);
    }
  return 0;
}
