/*
** formulas_shape_numpy.h — derivative helpers of the ops in src/ops/shape_numpy.lua.
*/
#ifndef LT_FORMULAS_SHAPE_MORE_H
#define LT_FORMULAS_SHAPE_MORE_H

#include "autograd.h"

#endif
