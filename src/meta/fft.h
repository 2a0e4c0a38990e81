/*
** fft.h — the device-neutral checks and result shapes of the FFT primitives
** (_fft_c2c, _fft_r2c, _fft_c2r, _fft_halfweight of src/ops/fft.lua) and of
** the complex constructors (complex, polar): what the meta device's kernels
** (src/metadev/fft.c) run, with the CPU kernels' messages, so both refuse
** the same input with the same words. The CPU's src/cpu/fft_ops.c and
** ew_complex.c still hold their own copies of these checks; they are to call
** these instead.
*/
#ifndef LT_META_FFT_H
#define LT_META_FFT_H

#include "core/tensor.h"

/* The dims of a transform, wrapped into dims: at least one, in range, none repeated,
** none of size 0; then normalization (0, 1 or 2). Returns the dims' count or -1. */
int lt_meta_fft_dims(const char *op, const lt_tensor *t, lt_intlist dim, int64_t normalization, int *dims);
/* _fft_c2c: self complex; the result has self's shape and dtype. nd or -1. */
int lt_meta_fft_c2c(const char *op, const lt_tensor *self, lt_intlist dim, int64_t normalization, int *dims);
/* _fft_r2c: self float32/float64; sizes gets the result's shape (the last dim transformed
** becomes n/2 + 1), of self's complex dtype. nd or -1. */
int lt_meta_fft_r2c(const char *op, const lt_tensor *self, lt_intlist dim, int64_t normalization, int *dims,
                    int64_t *sizes);
/* _fft_c2r: self complex with last_dim_size/2 + 1 values along the last dim transformed;
** sizes gets the real result's shape (last_dim_size there). nd or -1. */
int lt_meta_fft_c2r(const char *op, const lt_tensor *self, lt_intlist dim, int64_t normalization,
                    int64_t last_dim_size, int *dims, int64_t *sizes);
/* _fft_halfweight: self complex with n/2 + 1 values along dim; the wrapped dim or -1 */
int lt_meta_fft_halfweight(const char *op, const lt_tensor *self, int64_t dim, int64_t n);

/* complex(real, imag), polar(abs, angle): both float32 or both float64 (argument names
** na, nb); the result's complex dtype, or -1 */
int lt_meta_complex_parts(const char *op, const char *na, const char *nb, const lt_tensor *a, const lt_tensor *b);

#endif
