/*
** loss.h — argument checks of the loss functions (src/ops/nn_loss.lua): the
** reduction argument, nll_loss's shapes, and the composites' input checks.
*/
#ifndef LT_META_LOSS_H
#define LT_META_LOSS_H

#include "meta/meta.h"

enum { LT_LOSS_NONE, LT_LOSS_MEAN, LT_LOSS_SUM, LT_LOSS_BATCHMEAN };

/* reduction "mean" (or NULL), "sum", "none", and "batchmean" where allowed: LT_LOSS_*, or -1 */
int lt_meta_loss_reduction(const char *op, const char *reduction, bool batchmean);

/* nll_loss's input (C), (N, C) or (N, C, d1, ...) seen as (N, C, S) */
typedef struct lt_nll_geom { int64_t N, C, S; } lt_nll_geom;
/* a floating point input, an integer target of the input's shape without dim 2 (0-d for
** a 1-D input), weight NULL or 1-D floating point of C; not the class indices themselves */
int lt_meta_nll_loss(const char *op, const lt_tensor *self, const lt_tensor *target, const lt_tensor *weight,
                     lt_nll_geom *g);

/* a pointwise loss's target: the input's shape */
int lt_meta_loss_same_shape(const char *op, const lt_tensor *self, const lt_tensor *target);

/* every class index of target in [1, C] or ignore_index: the one check here that
** reads values, through a host copy of target */
int lt_meta_nll_targets(const char *op, const lt_tensor *target, int64_t C, int64_t ignore_index);

#endif
