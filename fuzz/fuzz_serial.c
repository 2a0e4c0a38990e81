/*
** fuzz_serial.c — lutorch's own checkpoint format (torch.save / torch.load,
** src/serial/serial.c and src/vm/lserial.c), through its three readers: a
** string in memory (torch.deserialize), a file mapped (torch.load with mmap and
** verify) and a file read as a stream (torch.load of an open file). The
** header's and the metadata's checksums are recomputed first (_fix_checksums),
** so mutations reach the layout and the value graph instead of stopping at a
** checksum; the data checksums are left as they come, so verify is fuzzed too.
*/
#include "fuzz_lua.h"

const lt_fuzz_target lt_fuzz_this = {
  "serial", NULL, "pytorch",
  "local S = torch.serialization\n"
  "return function(bytes, path)\n"
  "  local fixed = S._fix_checksums(bytes)\n"
  "  local ok, v = fuzz_try(torch.deserialize, fixed)\n"
  "  if ok then fuzz_touch(v) end\n"
  "  local f = assert(io.open(path, 'wb')); f:write(fixed); f:close()\n"
  "  ok, v = fuzz_try(torch.load, path, {mmap = true, verify = true})\n"
  "  if ok then fuzz_touch(v) end\n"
  "  v = nil; collectgarbage()\n"
  "  f = assert(io.open(path, 'rb'))\n"
  "  ok, v = fuzz_try(torch.load, f)\n"
  "  f:close()\n"
  "  if ok then fuzz_touch(v) end\n"
  "end\n"
};
