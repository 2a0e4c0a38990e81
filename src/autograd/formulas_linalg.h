/*
** formulas_linalg.h — derivative helpers for the linalg ops (see src/ops/README.md, "Derivatives").
*/
#ifndef LT_FORMULAS_LINALG_H
#define LT_FORMULAS_LINALG_H

#include "autograd.h"

#endif
