/*
** formulas_nn_conv.h — derivative helpers for the ops declared in src/ops/nn_conv.lua.
*/
#ifndef LT_FORMULAS_NN_CONV_H
#define LT_FORMULAS_NN_CONV_H

#include "autograd.h"

#endif
