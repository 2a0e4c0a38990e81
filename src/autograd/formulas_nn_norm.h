/*
** formulas_nn_norm.h — derivative helpers for the ops declared in src/ops/nn_norm.lua.
*/
#ifndef LT_FORMULAS_NN_NORM_H
#define LT_FORMULAS_NN_NORM_H

#include "autograd.h"

#endif
