-- torch.load / torch.deserialize on corrupt, truncated and hostile input: every case a
-- clear error naming the function, never a crash, never a huge allocation. Run under ASan.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local S = torch.serialization

local function sample()
  local x = torch.arange(0, 12, { dtype = torch.float32 }):view(3, 4)
  return { x = x, xt = x:t(), n = 7, f = 0.5, s = "str", b = true, l = { 1, 2, { 3 } },
           i = torch.tensor({ 1, 2, 3 }, { dtype = torch.int16 }) }
end
local good = torch.serialize(sample())

local function same(a, b)
  return torch.serialize(a) == torch.serialize(b)
end

-- replace n bytes at 0-based offset off
local function patch(s, off, bytes) return s:sub(1, off) .. bytes .. s:sub(off + #bytes + 1) end
local function u64(v) return string.pack("<I8", v) end

T.test("truncated at every offset: an error naming torch.deserialize", function()
  for n = 0, #good - 1 do
    local ok, err = pcall(torch.deserialize, good:sub(1, n))
    T.ok(not ok, "truncated to " .. n .. " bytes loaded")
    T.ok(tostring(err):find("torch.deserialize", 1, true), tostring(err))
  end
end)

T.test("every byte flipped: an error or (padding only) the same value", function()
  local errors = 0
  for i = 1, #good do
    local s = good:sub(1, i - 1) .. string.char(good:byte(i) ~ 0xff) .. good:sub(i + 1)
    local ok, v = pcall(torch.deserialize, s)
    if ok then T.ok(same(v, torch.deserialize(good)), "byte " .. i .. " changed the value silently")
    else errors = errors + 1; T.ok(tostring(v):find("torch.deserialize", 1, true)) end
  end
  T.ok(errors > #good * 0.7, "errors " .. errors .. " of " .. #good)
end)

T.test("every byte flipped with checksums recomputed: the parser itself holds", function()
  for i = 1, #good do
    for _, mask in ipairs({ 0xff, 0x01, 0x80 }) do
      local s = good:sub(1, i - 1) .. string.char(good:byte(i) ~ mask) .. good:sub(i + 1)
      s = S._fix_checksums(s)
      local ok, err = pcall(torch.deserialize, s)
      if not ok then
        err = tostring(err)
        T.ok(err:find("torch.deserialize", 1, true) or err:find("torch.load", 1, true), err)
      end
    end
  end
end)

T.test("bad magic, wrong version, flags", function()
  T.raises(function() torch.deserialize("hello world, not a tensor file at all.............................") end,
    "torch.deserialize", "bad magic")
  T.raises(function() torch.deserialize("") end, "torch.deserialize", "empty")
  T.raises(function() torch.deserialize(S._fix_checksums(patch(good, 8, string.pack("<I4", 2)))) end,
    "unsupported format version 2")
  T.raises(function() torch.deserialize(patch(good, 8, string.pack("<I4", 2))) end, "version 2")
  T.raises(function() torch.deserialize(S._fix_checksums(patch(good, 12, string.pack("<I4", 1)))) end, "flags")
  T.raises(function() torch.deserialize(patch(good, 20, "\1")) end, "header checksum")
end)

T.test("sizes that overflow, offsets out of bounds, a header claiming terabytes", function()
  local tb = S._fix_checksums(patch(good, 16, u64(1 << 42)))
  T.raises(function() torch.deserialize(tb) end, "torch.deserialize", "4398046511104")
  local tb2 = S._fix_checksums(patch(good, 16, u64((1 << 42) + #good % 8)))
  T.raises(function() torch.deserialize(tb2) end, "torch.deserialize", "truncated", "only " .. #good .. " present")
  local huge = S._fix_checksums(patch(good, 24, u64(-8)))
  T.raises(function() torch.deserialize(huge) end, "inconsistent section sizes")
  local dl = S._fix_checksums(patch(good, 40, u64(-64)))
  T.raises(function() torch.deserialize(dl) end, "inconsistent section sizes")
  local doff = S._fix_checksums(patch(good, 32, u64(3)))
  T.raises(function() torch.deserialize(doff) end, "inconsistent section sizes")
end)

-- build a metadata block by hand and wrap it in a valid header (no storages)
local function varint(v)
  local out = {}
  repeat
    local b = v & 0x7f
    v = v >> 7
    out[#out + 1] = string.char(b | (v ~= 0 and 0x80 or 0))
  until v == 0
  return table.concat(out)
end
local function wrap(meta, nst)
  nst = nst or 0
  local doff = (64 + #meta + 63) // 64 * 64
  local total = doff + 8 * nst + 8
  local h = "\x89LTS\r\n\x1a\n" .. string.pack("<I4I4I8I8I8I8I8I8", 1, 0, total, #meta, doff, 0, 0, 0)
  local s = h .. meta .. string.rep("\0", doff - 64 - #meta) .. string.rep("\0", 8 * nst) .. "LTS-END\n"
  return S._fix_checksums(s)
end

T.test("hand-made metadata: counts beyond the file, bad references, bad tags", function()
  -- a valid empty object first
  T.eq(torch.deserialize(wrap(varint(0) .. varint(0) .. varint(0) .. varint(0) .. "\3" .. varint(84))), 42)
  T.raises(function() torch.deserialize(wrap(varint(1 << 40))) end, "storages do not fit")
  T.raises(function() torch.deserialize(wrap(varint(0) .. varint(1 << 50))) end, "more classes than the file holds")
  T.raises(function() torch.deserialize(wrap(varint(0) .. varint(0) .. varint(1 << 60))) end, "more tensors")
  T.raises(function() torch.deserialize(wrap(varint(0) .. varint(0) .. varint(0) .. varint(1 << 62))) end, "more tables")
  T.raises(function() torch.deserialize(wrap(varint(0) .. varint(0) .. varint(0) .. varint(0) .. "\6" .. varint(0))) end,
    "a reference to table 1 of 0")
  T.raises(function() torch.deserialize(wrap(varint(0) .. varint(0) .. varint(0) .. varint(0) .. "\10")) end,
    "unknown value tag 10")
  -- dtype and device values by name
  local none = varint(0) .. varint(0) .. varint(0) .. varint(0)
  T.eq(torch.deserialize(wrap(none .. "\8" .. varint(5) .. "int16")) == torch.int16, true)
  T.raises(function() torch.deserialize(wrap(none .. "\8" .. varint(4) .. "blah")) end, "unknown dtype 'blah'")
  T.raises(function() torch.deserialize(wrap(none .. "\9" .. varint(6) .. "tpu:99")) end, "unknown device 'tpu:99'")
  T.raises(function() torch.deserialize(wrap(none .. "\8" .. varint(1 << 40))) end, "longer than 64 bytes")
  T.raises(function() torch.deserialize(wrap(none .. "\9" .. varint(20) .. "cpu")) end, "truncated", "name")
  T.raises(function() torch.deserialize(wrap(varint(0) .. varint(0) .. varint(0) .. varint(0) .. "\5" .. varint(1 << 62))) end,
    "truncated", "string")
  T.raises(function() torch.deserialize(wrap(varint(0) .. varint(0) .. varint(0) .. varint(0) .. "\3" .. string.rep("\x80", 11))) end,
    "longer than 10 bytes")
  T.raises(function() torch.deserialize(wrap(varint(0) .. varint(0) .. varint(0) .. varint(0) .. "\0\0")) end,
    "unexpected bytes")
  -- a table with a nil key
  T.raises(function() torch.deserialize(wrap(varint(0) .. varint(0) .. varint(0) .. varint(1) .. varint(0) .. varint(1) .. "\0\1" .. "\6" .. varint(0))) end,
    "table key is nil")
  -- a class name that is not registered
  local name = "evil.os.execute"
  T.raises(function() torch.deserialize(wrap(varint(0) .. varint(1) .. varint(#name) .. name .. varint(0) .. varint(0) .. "\0")) end,
    "names class \"evil.os.execute\"", "not registered")
  -- a tensor reaching past its storage, huge sizes, too many dims, negative strides
  local function tensor_meta(nbytes, rec)
    return varint(1) .. varint(0) .. varint(nbytes) .. varint(0) .. varint(1) .. rec .. varint(0) .. "\7" .. varint(0)
  end
  local function rec(dt, sidx, off, sizes, strides, flags)
    local s = string.char(dt) .. varint(3) .. "cpu" .. varint(sidx) .. varint(off) .. string.char(#sizes)
    for _, v in ipairs(sizes) do s = s .. varint(v) end
    for _, v in ipairs(strides) do s = s .. varint(v < 0 and (-v * 2 - 1) or v * 2) end
    return s .. string.char(flags or 0)
  end
  local function wrap_data(meta, nbytes)
    local doff = (64 + #meta + 63) // 64 * 64
    local total = doff + nbytes + 16
    local h = "\x89LTS\r\n\x1a\n" .. string.pack("<I4I4I8I8I8I8I8I8", 1, 0, total, #meta, doff, nbytes, 0, 0)
    return S._fix_checksums(h .. meta .. string.rep("\0", doff - 64 - #meta) .. string.rep("\1", nbytes) .. string.rep("\0", 8) .. "LTS-END\n")
  end
  local ok = torch.deserialize(wrap_data(tensor_meta(16, rec(8, 0, 0, { 4, 4 }, { 4, 1 })), 16))
  T.tensor(ok, { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 1, 1, 1 } })
  T.raises(function() torch.deserialize(wrap_data(tensor_meta(16, rec(8, 0, 0, { 4, 5 }, { 4, 1 })), 16)) end,
    "reaches byte 17 of a 16-byte storage")
  T.raises(function() torch.deserialize(wrap_data(tensor_meta(16, rec(1, 0, 0, { 1 << 40, 1 << 40 }, { 1 << 40, 1 })), 16)) end,
    "overflows")
  T.raises(function() torch.deserialize(wrap_data(tensor_meta(16, rec(8, 0, 0, { 2 }, { -1 })), 16)) end, "negative stride")
  T.raises(function() torch.deserialize(wrap_data(tensor_meta(16, rec(8, 0, 0, { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 })), 16)) end,
    "17 dims")
  T.raises(function() torch.deserialize(wrap_data(tensor_meta(16, rec(42, 0, 0, { 2 }, { 1 })), 16)) end, "unknown dtype")
  T.raises(function() torch.deserialize(wrap_data(tensor_meta(16, rec(8, 1, 0, { 2 }, { 1 })), 16)) end, "storage 2 of 1")
  T.raises(function() torch.deserialize(wrap_data(tensor_meta(16, rec(8, 0, 0, { 2 }, { 1 }, 1)), 16)) end, "bad tensor flags")
  T.raises(function() torch.deserialize(wrap_data(tensor_meta(1 << 40, rec(8, 0, 0, { 2 }, { 1 })), 16)) end,
    "lies outside the data section")
  -- two storages over the same bytes (would allocate more than the file holds)
  local two = varint(2) .. varint(0) .. varint(16) .. varint(0) .. varint(16) .. varint(0) .. varint(0) .. varint(0) .. "\0"
  local doff = (64 + #two + 63) // 64 * 64
  local h = "\x89LTS\r\n\x1a\n" .. string.pack("<I4I4I8I8I8I8I8I8", 1, 0, doff + 16 + 24, #two, doff, 16, 0, 0)
  local s = S._fix_checksums(h .. two .. string.rep("\0", doff - 64 - #two) .. string.rep("\1", 16) .. string.rep("\0", 16) .. "LTS-END\n")
  T.raises(function() torch.deserialize(s) end, "storage 2", "outside the data section")
end)

T.test("nesting a million deep: no recursion, no crash", function()
  local n = 1000000
  local parts = { varint(0), varint(0), varint(0), varint(n) }
  for i = 0, n - 1 do
    if i < n - 1 then parts[#parts + 1] = "\0\1\3\2\6" .. varint(i + 1)   -- {[1] = <next table>}
    else parts[#parts + 1] = "\0\0" end
  end
  parts[#parts + 1] = "\6\0"
  local v = torch.deserialize(wrap(table.concat(parts)))
  local d = 0
  while v[1] do v = v[1]; d = d + 1 end
  T.eq(d, n - 1)
end)

T.test("corrupt data: checksum mismatch on read; mmap verifies when asked", function()
  local s = torch.serialize({ x = torch.ones(100) })
  -- the data is the 400 bytes before the trailer (one storage: 8 + 8 bytes of trailer)
  local pos = #s - 16 - 400 + 10
  local bad = s:sub(1, pos - 1) .. "\xff" .. s:sub(pos + 1)
  T.raises(function() torch.deserialize(bad) end, "checksum mismatch in the data of storage 1")
  local p = os.tmpname()
  local f = assert(io.open(p, "wb")); f:write(bad); f:close()
  T.raises(function() torch.load(p) end, "torch.load", "checksum mismatch")
  T.raises(function() torch.load(p, { mmap = true, verify = true }) end, "checksum mismatch")
  local m = torch.load(p, { mmap = true })     -- unverified by default: the data as it is
  T.eq(m.x:numel(), 100)
  m = nil
  collectgarbage()
  -- file handles: truncated streams
  f = assert(io.open(p, "wb")); f:write(s:sub(1, 200)); f:close()
  f = assert(io.open(p, "rb"))
  T.raises(function() torch.load(f) end, "torch.load", "truncated")
  f:close()
  f = assert(io.open(p, "wb")); f:write(S._fix_checksums(patch(s, 16, u64(1 << 44)))); f:close()
  f = assert(io.open(p, "rb"))
  T.raises(function() torch.load(f) end, "truncated")
  f:close()
  os.remove(p)
end)

T.test("a big storage read from a file in pieces: exact; a flipped byte in any piece or a cut file is caught", function()
  -- 20 MiB + 12 bytes: torch.load reads it in 8 MiB pieces (src/serial/serial.c), and the
  -- small tensor's storage and the metadata put it at an offset that is not page aligned
  local x = torch.randn(5 * 1024 * 1024 + 3)
  local sd = { a = torch.ones(3), b = x }
  local D = T.scratch()
  local p = D.path("big.lt")
  torch.save(p, sd)
  local l = torch.load(p)
  T.ok(torch.equal(l.b, x), "20 MiB tensor loads back exactly")
  T.ok(torch.equal(l.a, sd.a))
  local s = D.read(p)
  -- the trailer is 2 * 8 + 8 bytes; either order of the storages puts these bytes in x's data
  for _, pos in ipairs({ #s - 24 - 1000, #s - 24 - 12 * 2^20, #s - 24 - 20 * 2^20 + 100 }) do
    local bad = D.write("bad.lt", s:sub(1, pos - 1) .. string.char(s:byte(pos) ~ 1) .. s:sub(pos + 1))
    T.raises(function() torch.load(bad) end, "torch.load", "'" .. bad .. "'", "checksum mismatch in the data of storage")
  end
  local cut = D.write("cut.lt", s:sub(1, #s - 24 - 9 * 2^20))
  T.raises(function() torch.load(cut) end, "torch.load", "'" .. cut .. "'", "truncated")
  D.remove()
end)

T.done()
