/*
** fuzz_csv.c — data.read_csv (src/vm/ldata_readers.c: lines, fields, numbers,
** empty fields, the header line), with a header and commas, and without a
** header and with tabs.
*/
#include "fuzz_lua.h"

const lt_fuzz_target lt_fuzz_this = {
  "csv", ".csv", "pytorch",
  "return function(bytes, path)\n"
  "  local ok, v = fuzz_try(data.read_csv, path)\n"
  "  if ok then fuzz_touch(v) end\n"
  "  ok, v = fuzz_try(data.read_csv, path, {header = false, delimiter = '\\t', dtype = torch.float64})\n"
  "  if ok then fuzz_touch(v) end\n"
  "end\n"
};
