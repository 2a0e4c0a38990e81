/*
** formulas_math_more.h — derivative helpers of the ops in src/ops/math_more.lua.
*/
#ifndef LT_FORMULAS_MATH_MORE_H
#define LT_FORMULAS_MATH_MORE_H

#include "autograd.h"

#endif
