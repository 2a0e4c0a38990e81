/*
** formulas_shape_more.h — derivative helpers of the ops in src/ops/shape_more.lua.
*/
#ifndef LT_FORMULAS_SHAPE_MORE_H
#define LT_FORMULAS_SHAPE_MORE_H

#include "autograd.h"

#endif
