/*
** formulas_index.h — derivative helpers for the index ops (see src/ops/README.md, "Derivatives").
*/
#ifndef LT_FORMULAS_INDEX_H
#define LT_FORMULAS_INDEX_H

#include "autograd.h"

#endif
