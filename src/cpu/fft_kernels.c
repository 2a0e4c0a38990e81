/*
** fft_kernels.c — the FFT engine's arithmetic in float32 and float64: fft_tmpl.h
** instantiated once per precision (the passes, Bluestein, one strided row).
*/
#include <stdint.h>
#include "cpu/fft_impl.h"

#define R float
#define S(name) name##_f32
#include "cpu/fft_tmpl.h"
#undef R
#undef S

#define R double
#define S(name) name##_f64
#include "cpu/fft_tmpl.h"
#undef R
#undef S
