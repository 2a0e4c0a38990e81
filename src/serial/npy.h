/*
** npy.h — NumPy's .npy format (versions 1.0, 2.0, 3.0): the header parser,
** the conversion of the raw bytes that follow into a tensor, and the writer.
** No Lua here. Reading works on any byte source: a caller reads the preamble,
** then the header text, then the data into the tensor lt_npy_new_raw gives,
** and lt_npy_finish turns it into the final tensor (byte swaps, widening of
** unsigned types lutorch lacks, Fortran order). torch.load_npy reads a file
** with pread, torch.load_npz a zip member, data.read_npy a gzip stream.
**
** `what` names the source in messages ("'x.npy'", "'a.npz' member 'w'").
*/
#ifndef LT_SERIAL_NPY_H
#define LT_SERIAL_NPY_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "core/tensor.h"
#include "serial/io.h"

#define LT_NPY_PREAMBLE_MIN 10     /* magic, version, 2-byte length (v1) */
#define LT_NPY_PREAMBLE_MAX 12     /* v2/v3: 4-byte length */
#define LT_NPY_MAX_HEADER (1u << 20)

typedef struct lt_npy_info {
  lt_dtype dtype;        /* the tensor's dtype once read */
  char descr[16];        /* as in the file, for messages */
  int src_size;          /* bytes per element in the file */
  char src_kind;         /* 'f', 'i', 'u', 'b' */
  bool swap;             /* file byte order differs from the host's */
  bool fortran;
  int ndim;
  int64_t sizes[LT_MAX_DIMS];
  int64_t numel;
  uint64_t data_bytes;   /* numel * src_size, overflow-checked */
} lt_npy_info;

/* From the first n bytes (n >= 10; 12 for v2/v3): the preamble length (10 or
** 12) and the header text length. -1 on bad magic / version / length. */
int lt_npy_preamble(const unsigned char *p, size_t n, size_t *pre_len, size_t *hdr_len, const char *what);
/* Parse the header dict ({'descr': .., 'fortran_order': .., 'shape': (..)}). */
int lt_npy_parse_header(const char *text, size_t n, lt_npy_info *info, const char *what);

/* A contiguous tensor to receive info->data_bytes raw bytes. */
lt_tensor *lt_npy_new_raw(const lt_npy_info *info);
/* Turn the raw tensor (consumed: released) into the final tensor: native byte
** order, unsigned types widened, bool bytes checked, C order. NULL on error. */
lt_tensor *lt_npy_finish(lt_tensor *raw, const lt_npy_info *info, const char *what);

/* Writing. lt_npy_prepare returns the tensor to write (a new reference: t
** itself when already C- or Fortran-contiguous, else a contiguous copy) and
** fills hdr with the complete header (preamble, dict, padding to 64 bytes).
** -1 / NULL for dtypes .npy cannot hold (bfloat16) or non-CPU tensors. */
#define LT_NPY_HEADER_CAP 1024
lt_tensor *lt_npy_prepare(lt_tensor *t, char *hdr, size_t *hdr_len, const char *what);
/* Bytes of a prepared tensor (contiguous in C or Fortran order). */
static inline size_t lt_npy_data_bytes(const lt_tensor *t) {
  return (size_t)t->numel * lt_dtype_size((lt_dtype)t->dtype);
}
/* header + data into a sink */
int lt_npy_write(lt_io_sink *s, lt_tensor *t, const char *what);
/* torch.save_npy: atomic write of one tensor to path */
int lt_npy_save(const char *path, lt_tensor *t);
/* torch.load_npy: the first array of the file (trailing bytes are ignored, as numpy does) */
lt_tensor *lt_npy_load(const char *path);

#endif
