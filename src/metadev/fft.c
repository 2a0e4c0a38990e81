/*
** fft.c — the meta kernels of the FFT primitives (_fft_c2c, _fft_r2c,
** _fft_c2r, _fft_halfweight; torch.fft's functions and stft are composites
** over them, so they run on meta too) and of the complex constructors and
** angle. The checks and shapes are meta/fft.h's; the transforms' results are
** new contiguous tensors, the pointwise ones laid out as the CPU's
** elementwise kernels lay theirs out.
*/
#include "kernels_meta.h"   /* generated: the prototypes */
#include "metadev/metadev.h"
#include "meta/meta.h"
#include "meta/fft.h"

lt_tensor *lt_metadev__fft_c2c(lt_tensor *self, lt_intlist dim, int64_t normalization, bool forward) {
  (void)forward;
  int dims[LT_MAX_DIMS];
  if (lt_meta_fft_c2c("_fft_c2c", self, dim, normalization, dims) < 0) return NULL;
  return lt_tensor_new((lt_dtype)self->dtype, lt_metadev_device(), self->ndim, self->sizes);
}

lt_tensor *lt_metadev__fft_r2c(lt_tensor *self, lt_intlist dim, int64_t normalization, bool forward) {
  (void)forward;
  int dims[LT_MAX_DIMS];
  int64_t sz[LT_MAX_DIMS];
  if (lt_meta_fft_r2c("_fft_r2c", self, dim, normalization, dims, sz) < 0) return NULL;
  return lt_tensor_new(lt_dtype_to_complex((lt_dtype)self->dtype), lt_metadev_device(), self->ndim, sz);
}

lt_tensor *lt_metadev__fft_c2r(lt_tensor *self, lt_intlist dim, int64_t normalization, int64_t last_dim_size,
                               bool forward) {
  (void)forward;
  int dims[LT_MAX_DIMS];
  int64_t sz[LT_MAX_DIMS];
  if (lt_meta_fft_c2r("_fft_c2r", self, dim, normalization, last_dim_size, dims, sz) < 0) return NULL;
  return lt_tensor_new(lt_dtype_to_real((lt_dtype)self->dtype), lt_metadev_device(), self->ndim, sz);
}

lt_tensor *lt_metadev__fft_halfweight(lt_tensor *self, int64_t dim, int64_t n, double weight) {
  (void)weight;
  if (lt_meta_fft_halfweight("_fft_halfweight", self, dim, n) < 0) return NULL;
  return lt_tensor_new((lt_dtype)self->dtype, lt_metadev_device(), self->ndim, self->sizes);
}

/* angle: real for complex self, integers and bool the default float dtype */
lt_tensor *lt_metadev_angle(lt_tensor *self, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_complex(dt) && !lt_dtype_is_float(dt)) dt = lt_get_default_dtype();
  return lt_metadev_pointwise("angle", &self, 1, LT_MD_SELF, (int)lt_dtype_to_real(dt), out);
}

static lt_tensor *from_parts(const char *op, const char *na, const char *nb, lt_tensor *a, lt_tensor *b,
                             lt_tensor *out) {
  int cdt = lt_meta_complex_parts(op, na, nb, a, b);
  if (cdt < 0) return NULL;
  lt_tensor *ts[2] = {a, b};
  return lt_metadev_pointwise(op, ts, 2, LT_MD_PROMOTE, cdt, out);
}

lt_tensor *lt_metadev_complex(lt_tensor *real, lt_tensor *imag, lt_tensor *out) {
  return from_parts("complex", "real", "imag", real, imag, out);
}

lt_tensor *lt_metadev_polar(lt_tensor *abs, lt_tensor *angle, lt_tensor *out) {
  return from_parts("polar", "abs", "angle", abs, angle, out);
}
