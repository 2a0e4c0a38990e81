/*
** formulas_index.c — derivative helpers for the index ops, and masked_fill
** with a tensor value.
**
** The backward of each op is built from its sibling ops (index_select <->
** index_add, gather <-> scatter_add, take <-> put, masked_select <->
** masked_scatter), all through their entry points so that create_graph
** records them (double backward).
*/
#include <string.h>
#include "formulas_index.h"
#include "lt_ops.h"

static lt_tensor *zeros_meta_as(const lt_input_meta *m, const lt_tensor *like) {
  return lt_zeros(lt_intlist_make(m->sizes, m->ndim), (lt_dtype)like->dtype, m->device);
}

lt_tensor *lt_grad_index_select_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, lt_tensor *index) {
  lt_tensor *z = zeros_meta_as(self_meta, grad);
  if (!z) return NULL;
  lt_tensor *r = lt_index_add(z, dim, index, grad, lt_scalar_int(1));
  lt_tensor_release(z);
  return r;
}

lt_tensor *lt_grad_gather_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, lt_tensor *index) {
  lt_tensor *z = zeros_meta_as(self_meta, grad);
  if (!z) return NULL;
  lt_tensor *r = lt_scatter_add(z, dim, index, grad);
  lt_tensor_release(z);
  return r;
}

lt_tensor *lt_grad_scatter_self(lt_tensor *grad, int64_t dim, lt_tensor *index) {
  return lt_scatter_value(grad, dim, index, lt_scalar_int(0));
}

/* grad padded with zeros at the end of each dim up to the sizes of m */
static lt_tensor *pad_to(lt_tensor *g, const lt_input_meta *m) {
  lt_tensor_retain(g);
  if (g->ndim != m->ndim) return g;   /* a 0-d src: lt_grad_to_meta sums */
  for (int d = 0; d < g->ndim; d++) {
    if (g->sizes[d] >= m->sizes[d]) continue;
    int64_t zs[LT_MAX_DIMS];
    memcpy(zs, g->sizes, sizeof(int64_t) * (size_t)g->ndim);
    zs[d] = m->sizes[d] - g->sizes[d];
    lt_tensor *z = lt_zeros(lt_intlist_make(zs, g->ndim), (lt_dtype)g->dtype, lt_tensor_device(g));
    lt_tensor *parts[2] = {g, z};
    lt_tensor *r = z ? lt_cat(parts, 2, d) : NULL;
    lt_tensor_release(z);
    lt_tensor_release(g);
    if (!r) return NULL;
    g = r;
  }
  return g;
}

lt_tensor *lt_grad_scatter_src(lt_tensor *grad, const lt_input_meta *src_meta, int64_t dim, lt_tensor *index) {
  lt_tensor *g = lt_gather(grad, dim, index);
  if (!g) return NULL;
  lt_tensor *r = pad_to(g, src_meta);
  lt_tensor_release(g);
  return r;
}

lt_tensor *lt_grad_index_add_source(lt_tensor *grad, int64_t dim, lt_tensor *index, lt_scalar alpha) {
  lt_tensor *s = lt_index_select(grad, dim, index);
  if (!s) return NULL;
  lt_tensor *r = lt_grad_scale(s, alpha);
  lt_tensor_release(s);
  return r;
}

lt_tensor *lt_grad_index_fill_zero(lt_tensor *grad, int64_t dim, lt_tensor *index) {
  return lt_index_fill(grad, dim, index, lt_scalar_int(0));
}

lt_tensor *lt_grad_masked_fill_zero(lt_tensor *grad, lt_tensor *mask) {
  return lt_masked_fill(grad, mask, lt_scalar_int(0));
}

lt_tensor *lt_grad_masked_select_back(lt_tensor *grad, const lt_input_meta *self_meta, lt_tensor *mask) {
  int64_t bs[LT_MAX_DIMS];
  int nd = lt_broadcast_shapes("masked_select", self_meta->ndim, self_meta->sizes, mask->ndim, mask->sizes, bs);
  if (nd < 0) return NULL;
  lt_tensor *z = lt_zeros(lt_intlist_make(bs, nd), (lt_dtype)grad->dtype, self_meta->device);
  if (!z) return NULL;
  lt_tensor *r = lt_masked_scatter(z, mask, grad);   /* lt_grad_to_meta sums a broadcast self */
  lt_tensor_release(z);
  return r;
}

/* source's first `count` elements (in order) went to the true positions; the rest get zeros */
lt_tensor *lt_grad_masked_scatter_source(lt_tensor *grad, const lt_input_meta *source_meta, lt_tensor *mask) {
  lt_tensor *s = lt_masked_select(grad, mask);
  if (!s) return NULL;
  int64_t numel = 1;
  for (int i = 0; i < source_meta->ndim; i++) numel *= source_meta->sizes[i];
  if (s->numel < numel) {
    int64_t rest = numel - s->numel;
    lt_tensor *z = lt_zeros(lt_intlist_make(&rest, 1), (lt_dtype)s->dtype, lt_tensor_device(s));
    lt_tensor *parts[2] = {s, z};
    lt_tensor *c = z ? lt_cat(parts, 2, 0) : NULL;
    lt_tensor_release(z);
    lt_tensor_release(s);
    if (!c) return NULL;
    s = c;
  }
  lt_tensor *r = lt_reshape(s, lt_intlist_make(source_meta->sizes, source_meta->ndim));
  lt_tensor_release(s);
  return r;
}

lt_tensor *lt_grad_take_back(lt_tensor *grad, const lt_input_meta *self_meta, lt_tensor *index) {
  lt_tensor *z = zeros_meta_as(self_meta, grad);
  if (!z) return NULL;
  lt_tensor *r = lt_put(z, index, grad, true);
  lt_tensor_release(z);
  return r;
}

lt_tensor *lt_grad_put_self(lt_tensor *grad, lt_tensor *index, bool accumulate) {
  if (accumulate) return lt_grad_identity(grad);
  lt_tensor *z = lt_zeros(lt_intlist_make(index->sizes, index->ndim), (lt_dtype)grad->dtype, lt_tensor_device(grad));
  if (!z) return NULL;
  lt_tensor *r = lt_put(grad, index, z, false);
  lt_tensor_release(z);
  return r;
}

lt_tensor *lt_grad_put_source(lt_tensor *grad, const lt_input_meta *source_meta, lt_tensor *index) {
  lt_tensor *t = lt_take(grad, index);
  if (!t) return NULL;
  lt_tensor *r = lt_reshape(t, lt_intlist_make(source_meta->sizes, source_meta->ndim));
  lt_tensor_release(t);
  return r;
}

/* ---- masked_fill(self, mask, Tensor value) ---- */

/* the number of true entries of mask broadcast against self, or -1 */
static int64_t broadcast_count(lt_tensor *self, lt_tensor *mask) {
  int64_t bs[LT_MAX_DIMS];
  int nd = lt_broadcast_shapes("masked_fill", self->ndim, self->sizes, mask->ndim, mask->sizes, bs);
  if (nd < 0) return -1;
  if (mask->dtype != LT_BOOL)
    return lt_error("masked_fill: argument 'mask' must be a bool tensor, got %s", lt_dtype_name((lt_dtype)mask->dtype));
  int64_t st[LT_MAX_DIMS];
  if (lt_expand_strides("masked_fill", mask, nd, bs, st) < 0) return -1;
  lt_tensor *e = lt_tensor_alias(mask, mask->offset, nd, bs, st);
  lt_tensor *c = e ? lt_tensor_contiguous(e) : NULL;
  lt_tensor_release(e);
  if (!c) return -1;
  if (LT_IS_META(c)) {   /* how many elements the mask keeps is its data's */
    lt_tensor_release(c);
    return lt_error("masked_fill: cannot run on meta tensors: the count of the mask's elements depends on the data");
  }
  const bool *m = lt_tensor_data(c);
  int64_t k = 0;
  for (int64_t i = 0; i < c->numel; i++) k += m[i];
  lt_tensor_release(c);
  return k;
}

lt_tensor *lt_composite_masked_fill_t(lt_tensor *self, lt_tensor *mask, lt_tensor *value, lt_tensor *out) {
  if (value->numel != 1) {
    char b[128];
    return lt_error_null("masked_fill: argument 'value' must be a number or a 0-d tensor, got a tensor of shape %s",
                         lt_shape_str(value->ndim, value->sizes, b, sizeof b));
  }
  bool inplace = out == self;
  bool saved = lt_tls_inplace_op;
  lt_tls_inplace_op = false;
  lt_tensor *r = NULL;
  if (!(lt_grad_enabled() && value->requires_grad)) {
    lt_scalar s = lt_tensor_item_complex(value);
    if (!lt_scalar_is_none(s))
      r = inplace ? lt_masked_fill_(self, mask, s) : out ? lt_masked_fill_out(self, mask, s, out)
                                                         : lt_masked_fill(self, mask, s);
  } else {
    /* the value spread over the true positions, as masked_scatter's source */
    int64_t n = broadcast_count(self, mask);
    lt_tensor *v0 = n >= 0 ? lt_reshape(value, lt_intlist_make(NULL, 0)) : NULL;
    lt_tensor *src = v0 ? lt_expand(v0, lt_intlist_make(&n, 1)) : NULL;
    if (src)
      r = inplace ? lt_masked_scatter_(self, mask, src) : out ? lt_masked_scatter_out(self, mask, src, out)
                                                              : lt_masked_scatter(self, mask, src);
    lt_tensor_release(src);
    lt_tensor_release(v0);
  }
  lt_tls_inplace_op = saved;
  return r;
}
