/*
** parallel.h — intra-op parallelism: one small pthread pool for the process.
*/
#ifndef LT_PARALLEL_H
#define LT_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

/* Items below which threading an elementwise loop does not pay. */
#define LT_GRAIN_ELEMENTWISE 32768

typedef void (*lt_parallel_fn)(void *ctx, int64_t begin, int64_t end);

/* Run fn over [0,n) split into at most lt_get_num_threads() chunks of at
** least `grain` items each; every index is covered exactly once. Runs inline
** as fn(ctx, 0, n) — no threads touched — when n < 2*grain, when the thread
** count is 1, when called inside a parallel region, or when another thread
** is already using the pool. The calling thread works on chunks too. fn runs
** on pool threads, so an error it sets with lt_error lands in that thread's
** slot: report failures through ctx. */
void lt_parallel_for(int64_t n, int64_t grain, lt_parallel_fn fn, void *ctx);

/* Default: LUTORCH_NUM_THREADS, else OMP_NUM_THREADS, else the cores this
** process may run on. */
int lt_get_num_threads(void);
/* Also sets OpenBLAS's count, so the two pools never oversubscribe the cores. */
void lt_set_num_threads(int n);

/* True on a pool thread and on a caller while it runs a parallel loop. */
bool lt_in_parallel_region(void);

#endif
