/*
** tpool.h — a pool of temporary tensors, for code written with the ops' entry
** points (composite ops, derivative formulas): keep() every result, finish()
** hands back the one wanted as a new reference and releases the rest. Keeping
** a NULL (a failed op) marks the pool failed, so a chain of calls needs one
** check, at the end.
*/
#ifndef LT_TPOOL_H
#define LT_TPOOL_H

#include <stdbool.h>
#include "core/tensor.h"

#define LT_TPOOL_MAX 64

typedef struct lt_tpool { lt_tensor *t[LT_TPOOL_MAX]; int n; bool failed; } lt_tpool;

/* t (borrowed from the pool from now on), or NULL: t was NULL, or the pool is full */
lt_tensor *lt_tpool_keep(lt_tpool *p, lt_tensor *t);
/* r as a new reference, NULL after any failure; the pool is emptied either way */
lt_tensor *lt_tpool_finish(lt_tpool *p, lt_tensor *r);
/* empties the pool */
void lt_tpool_drop(lt_tpool *p);
/* r (usually one of the pool's; NULL passes) as a new reference, the pool emptied:
** for code that checks each step itself and ignores the failed mark */
lt_tensor *lt_tpool_give(lt_tpool *p, lt_tensor *r);

#endif
