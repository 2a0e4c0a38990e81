/*
** formulas_elementwise.h — derivative helpers for the elementwise ops (see src/ops/README.md, "Derivatives").
*/
#ifndef LT_FORMULAS_ELEMENTWISE_H
#define LT_FORMULAS_ELEMENTWISE_H

#include "autograd.h"

#endif
