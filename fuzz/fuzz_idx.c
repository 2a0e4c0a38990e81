/*
** fuzz_idx.c — the idx files of MNIST and Fashion-MNIST: data.read_idx
** (src/vm/ldata_readers.c: the magic's dtype and rank, big-endian sizes, the
** data, through zlib, which reads gzipped and plain files alike).
*/
#include "fuzz_lua.h"

const lt_fuzz_target lt_fuzz_this = {
  "idx", ".idx", "pytorch",
  "return function(bytes, path)\n"
  "  local ok, v = fuzz_try(data.read_idx, path)\n"
  "  if ok then fuzz_touch(v) end\n"
  "end\n"
};
