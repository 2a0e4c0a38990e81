/*
** formulas.h — every derivative helper, for the generated Autograd kernels.
** One header per op family; each family's helpers live in formulas_FAMILY.c.
*/
#ifndef LT_FORMULAS_H
#define LT_FORMULAS_H

#include "autograd.h"
#include "formulas_elementwise.h"
#include "formulas_reduce.h"
#include "formulas_special.h"
#include "formulas_shape.h"
#include "formulas_index.h"
#include "formulas_linalg.h"
#include "formulas_linalg_spectral.h"
#include "formulas_nn_conv.h"
#include "formulas_nn_norm.h"
#include "formulas_nn_misc.h"
#include "formulas_shape_numpy.h"
#include "formulas_math.h"
#include "formulas_linalg_solve.h"
#include "formulas_fft.h"
#include "formulas_complex.h"
#include "formulas_complex_more.h"

#endif
