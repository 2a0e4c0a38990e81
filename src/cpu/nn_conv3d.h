/*
** nn_conv3d.h — what the CPU's conv3d files share: nn_conv3d.c (the three ops:
** vol2col + gemm) and nn_conv3d_direct.c (direct vector loops for stride-1 layers
** with few channels). Private to the CPU backend.
*/
#ifndef LT_NN_CONV3D_H
#define LT_NN_CONV3D_H

#include "meta/conv.h"

/* the zero-padded volumes of one group (Hp x Wp planes of P elements, V a volume) and
** each kernel tap's start in one: kd*dD*P + kh*dH*Wp + kw*dW */
typedef struct lt_conv3_padded {
  int64_t Hp, Wp, P, V;
  int64_t off[];        /* [T] */
} lt_conv3_padded;

/* malloc'd (free it); NULL when out of memory */
lt_conv3_padded *lt_conv3_padded_new(const lt_conv3_geom *q);
/* the interior of xp (cg padded volumes) from x's cg channels; the border is left alone
** (zeroed once by the caller, it stays zero) */
void lt_conv3_pad_group(const lt_conv3_geom *q, const lt_conv3_padded *pv, const char *x, char *xp);

/* whether the direct loop takes q's forward pass (stride 1, few channels, long rows) */
bool lt_conv3d_direct_ok(const lt_conv3_geom *q);
/* y = conv(x, w) + b (b may be NULL), all contiguous, w as g groups of og x K; 0, or -1
** when out of memory */
int lt_conv3d_direct_forward(const lt_conv3_geom *q, const char *x, const char *w, const char *b, char *y);
/* whether the direct loop takes q's weight gradient */
bool lt_conv3d_direct_weight_ok(const lt_conv3_geom *q);
/* gw = the weight gradient from x and gy; 0, or -1 when out of memory */
int lt_conv3d_direct_backward_weight(const lt_conv3_geom *q, const char *x, const char *gy, char *gw);

#endif
