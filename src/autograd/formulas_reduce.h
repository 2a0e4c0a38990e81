/*
** formulas_reduce.h — derivative helpers for the reduce ops (see src/ops/README.md, "Derivatives").
*/
#ifndef LT_FORMULAS_REDUCE_H
#define LT_FORMULAS_REDUCE_H

#include "autograd.h"

#endif
