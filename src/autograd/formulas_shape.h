/*
** formulas_shape.h — derivative helpers for the shape ops (see src/ops/README.md, "Derivatives").
*/
#ifndef LT_FORMULAS_SHAPE_H
#define LT_FORMULAS_SHAPE_H

#include "autograd.h"

#endif
