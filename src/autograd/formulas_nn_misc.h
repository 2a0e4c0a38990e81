/*
** formulas_nn_misc.h — derivative helpers for the ops declared in src/ops/nn_misc.lua.
*/
#ifndef LT_FORMULAS_NN_MISC_H
#define LT_FORMULAS_NN_MISC_H

#include "autograd.h"

#endif
