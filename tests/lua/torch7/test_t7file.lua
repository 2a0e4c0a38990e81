-- Torch7 mode's files and serialization (lutorch-torch7(7), "Files and
-- serialization"): DiskFile, MemoryFile, PipeFile, the typed reads and writes,
-- writeObject/readObject, torch.serialize and torch.save. Files are compared
-- byte for byte with what the reference writer (tests/ref/t7_writer.py, through
-- tests/ref/t7_file_cases.py) writes for the same objects, and read back by
-- torch.load_t7 and readObject. Run under `lutorch --torch7` by
-- tests/sh/test_torch7_mode.sh.
local T = require "testing"

local S = T.scratch()
local have_py = os.execute("python3 -c 'import struct' >/dev/null 2>&1") == true
local ref_ok = have_py and os.execute("python3 tests/ref/t7_file_cases.py " .. S.dir .. " >/dev/null") == true
local function ref(name, ext)
  if not ref_ok then return nil end
  return S.read(S.path(name .. "." .. ext .. ".t7"))
end

-- the objects of t7_file_cases.py, built in Lua
local function seq(n, f) local t = {} for i = 1, n do t[i] = f(i) end return t end
local Point = torch.class("t7test.Point", {})
local function cases()
  local c = {}
  c.numbers = { 1, 2.5, -3, 1e300, "hello", "", "two\nlines", true, false, 0.1 }
  local vals = { 1, -2, 3, 4, -5, 6 }
  c.tensors = {}
  for _, kind in ipairs({ "Double", "Float", "Half", "Long", "Int", "Short", "Char", "Byte" }) do
    local v = seq(6, function(i)
      local x = vals[i]
      if kind == "Byte" then x = math.abs(x) end
      if kind == "Double" or kind == "Float" or kind == "Half" then x = x * 0.5 end
      return x
    end)
    local t = torch[kind .. "Tensor"](2, 3)
    for i = 1, 2 do for j = 1, 3 do t[i][j] = v[(i - 1) * 3 + j] end end
    c.tensors[#c.tensors + 1] = t
  end
  local a = torch.DoubleTensor(3, 4)
  for i = 1, 12 do a:view(12)[i] = i end
  c.shared = { a, a:t(), a, a:storage() }
  local b = torch.DoubleTensor(3, 4)
  for i = 1, 12 do b:view(12)[i] = i end
  c.narrow = b:narrow(1, 2, 2):narrow(2, 2, 2)
  local cyc = { 1 }
  cyc[2] = cyc
  c.cycle = cyc
  local p = Point()
  p.x = 2.5
  c.class = p
  c.empty = torch.DoubleTensor()
  local st = torch.IntStorage(3)
  st[1], st[2], st[3] = 7, -8, 9
  c.storage = st
  c.keyed = { k = { true, "v" } }
  return c
end

local NAMES = { "numbers", "tensors", "shared", "narrow", "cycle", "class", "empty", "storage", "keyed" }

for _, fmt in ipairs({ "bin", "ascii" }) do
  local mode = fmt == "bin" and "binary" or "ascii"

  T.test(mode .. ": torch.serialize and torch.save equal the reference writer byte for byte", function()
    if not ref_ok then T.skip(mode .. " bytes", "python3 is not available to run tests/ref/t7_file_cases.py"); return end
    local c = cases()
    for _, name in ipairs(NAMES) do
      local want = ref(name, fmt)
      local got = torch.serialize(c[name], mode)
      T.ok(got == want, ("%s (%s): %d bytes, the reference has %d"):format(name, mode, #got, #want))
      local p = S.path("mine." .. name .. "." .. fmt .. ".t7")
      torch.save(p, c[name], mode)
      T.ok(S.read(p) == want, name .. ": torch.save's file differs from the reference")
      T.eq(torch.serializeToStorage(c[name], mode):size(), #want)
    end
  end)

  T.test(mode .. ": the reference's files read back through readObject and torch.load", function()
    if not ref_ok then T.skip(mode .. " read", "python3 is not available"); return end
    local n = torch.load(S.path("numbers." .. fmt .. ".t7"))
    T.eq(n, { 1, 2.5, -3, 1e300, "hello", "", "two\nlines", true, false, 0.1 })
    T.eq(math.type(n[1]), "integer")
    local ts = torch.load(S.path("tensors." .. fmt .. ".t7"), mode)
    local types = { "Double", "Float", "Half", "Long", "Int", "Short", "Char", "Byte" }
    for i, kind in ipairs(types) do
      T.eq(ts[i]:type(), "torch." .. kind .. "Tensor")
      T.eq(ts[i]:size(1), 2); T.eq(ts[i]:size(2), 3)
    end
    T.eq(ts[1]:totable(), { { 0.5, -1, 1.5 }, { 2, -2.5, 3 } })
    T.eq(ts[8]:totable(), { { 1, 2, 3 }, { 4, 5, 6 } })
    local sh = torch.load(S.path("shared." .. fmt .. ".t7"))
    T.ok(rawequal(sh[1], sh[3]), "the same tensor twice is one tensor")
    sh[1][1][2] = 100
    T.eq(sh[2][2][1], 100)                          -- the transposed view shares the storage
    T.eq(sh[4][2], 100)                             -- and so does the storage itself
    T.eq(torch.typename(sh[4]), "torch.DoubleStorage")
    local nr = torch.load(S.path("narrow." .. fmt .. ".t7"))
    T.eq(nr:totable(), { { 6, 7 }, { 10, 11 } })
    T.eq(nr:storageOffset(), 6)
    local cy = torch.load(S.path("cycle." .. fmt .. ".t7"))
    T.ok(rawequal(cy[2], cy))
    local p = torch.load(S.path("class." .. fmt .. ".t7"))
    T.eq(torch.typename(p), "t7test.Point"); T.eq(p.x, 2.5)
    T.eq(torch.load(S.path("empty." .. fmt .. ".t7")):nElement(), 0)
    T.eq(torch.load(S.path("storage." .. fmt .. ".t7")):totable(), { 7, -8, 9 })
    T.eq(torch.load(S.path("keyed." .. fmt .. ".t7")), { k = { true, "v" } })
  end)

  T.test(mode .. ": torch.load_t7 reads what torch.save wrote", function()
    local c = cases()
    local p = S.path("lt7." .. fmt .. ".t7")
    torch.save(p, { c.tensors[1], c.tensors[6], c.narrow, c.storage, "s", 3 }, mode)
    local r = torch.load_t7(p)
    T.eq(r[1]:totable(), c.tensors[1]:totable())
    T.eq(r[2]:totable(), c.tensors[6]:totable())
    T.eq(r[3]:totable(), { { 6, 7 }, { 10, 11 } })
    T.eq(r[4]:totable(), { 7, -8, 9 })
    T.eq(r[5], "s"); T.eq(r[6], 3)
  end)
end

T.test("writeObject / readObject: a clone through a MemoryFile keeps sharing and cycles", function()
  local x = torch.rand(4, 5)
  local obj = { a = 1, t = x, again = x, row = x[2], nested = { s = "z", flag = false } }
  obj.me = obj
  for _, m in ipairs({ "binary", "ascii" }) do
    local f = torch.MemoryFile()
    f[m](f)
    f:writeObject(obj)
    f:seek(1)
    local y = f:readObject()
    T.ok(rawequal(y.me, y)); T.ok(rawequal(y.t, y.again))
    T.eq(y.a, 1); T.eq(y.nested, { s = "z", flag = false })
    T.eq(y.t:totable(), x:totable())
    y.t[2][3] = -7
    T.eq(y.row[3], -7)                       -- a row view over the same storage
    T.ok(x[2][3] ~= -7)                      -- a copy, not x
    f:close()
  end
end)

T.test("every tensor type round-trips; strided, 0-d and long tensors", function()
  for _, kind in ipairs({ "Double", "Float", "Half", "Long", "Int", "Short", "Char", "Byte" }) do
    local t = torch[kind .. "Tensor"](3, 2):fill(3)
    for _, m in ipairs({ "binary", "ascii" }) do
      local r = torch.deserialize(torch.serialize(t, m), m)
      T.eq(r:type(), t:type()); T.eq(r:totable(), t:totable())
    end
  end
  local big = torch.LongTensor(2):fill(2 ^ 40)
  T.eq(torch.deserialize(torch.serialize(big))[1], 2 ^ 40)
  local t = torch.rand(3, 4):t()
  T.eq(torch.deserialize(torch.serialize(t)):totable(), t:totable())
  local e = torch.deserialize(torch.serialize(torch.FloatTensor()))
  T.eq(e:type(), "torch.FloatTensor"); T.eq(e:nElement(), 0)
  local big2 = torch.rand(1000, 1000)
  local r = torch.deserialize(torch.serialize(big2))
  T.eq(r:size(1), 1000); T.eq((r - big2):abs():max(), 0)
end)

T.test("class objects: fields, __write / __read hooks, hooks at write time", function()
  local Hooked = torch.class("t7test.Hooked", {})
  function Hooked:__init() self.v = 0 end
  function Hooked:write(f) f:writeInt(self.v * 2) end
  function Hooked:read(f, version) self.v = f:readInt() / 2; self.version = version end
  local h = Hooked(); h.v = 21
  local r = torch.deserialize(torch.serialize({ h, h }))
  T.eq(torch.typename(r[1]), "t7test.Hooked"); T.eq(r[1].v, 21); T.eq(r[1].version, 1)
  T.ok(rawequal(r[1], r[2]))
  local p = Point(); p.x = 1
  local f = torch.MemoryFile():binary()
  f:writeObject({ p }, nil, function(o) if torch.typename(o) == "t7test.Point" then return "was a point" end return o end)
  f:seek(1)
  T.eq(f:readObject(), { "was a point" })
end)

T.test("generators serialize: the restored one gives the same stream", function()
  local g = torch.Generator()
  torch.manualSeed(g, 123)
  torch.random(g)
  local g2 = torch.deserialize(torch.serialize(g))
  for _ = 1, 5 do T.eq(torch.random(g), torch.random(g2)) end
  local g3 = torch.deserialize(torch.serialize(g, "ascii"), "ascii")
  T.eq(torch.uniform(g3), torch.uniform(g))
end)

T.test("typed reads and writes: numbers, tables, storages, ascii spacing", function()
  local f = torch.MemoryFile()
  T.eq(f:isBinary(), false); T.eq(f:isAutoSpacing(), true)
  T.eq(f:writeInt(3), 1)
  T.eq(f:writeDouble({ 1.5, -2 }), 2)
  T.eq(f:writeFloat(torch.FloatStorage(3):fill(0.25)), 3)
  f:writeByte(65); f:writeChar({ 66, 67 })
  f:writeInt(3.9)                            -- converted as Torch7 did: 3
  f:writeBool(true)
  T.eq(f:storage():string(), "3\n1.5 -2\n0.25 0.25 0.25\nA\nBC\n3\n1\n\0")
  f:seek(1)
  T.eq(f:readInt(), 3)
  local d = f:readDouble(2)
  T.eq(torch.typename(d), "torch.DoubleStorage"); T.eq(d:totable(), { 1.5, -2 })
  local fs = torch.FloatStorage(3)
  T.eq(f:readFloat(fs), 3); T.eq(fs:totable(), { 0.25, 0.25, 0.25 })
  T.eq(f:readByte(), 65); T.eq(f:readChar(2):string(), "BC")
  T.eq(f:readInt(), 3); T.eq(f:readBool(), true)
  local g = torch.MemoryFile():noAutoSpacing()
  g:writeInt({ 1, 2 })
  T.eq(g:storage():string(), "12\0")
  local b = torch.MemoryFile():binary()
  b:writeInt(1); b:writeLong(2); b:writeShort(-1); b:writeDouble(0.5)
  T.eq(#b:storage() - 1, 4 + 8 + 2 + 8)
  b:seek(1)
  T.eq(b:readInt(), 1); T.eq(b:readLong(), 2); T.eq(b:readShort(), -1); T.eq(b:readDouble(), 0.5)
  T.eq(b:position(), 23)
end)

T.test("longSize(4): binary longs in 4 bytes, read with torch.load(path, 'b32')", function()
  local f = torch.MemoryFile():binary():longSize(4)
  f:writeLong({ 5, -6 })
  T.eq(#f:storage() - 1, 8)
  f:seek(1)
  T.eq(f:readLong(2):totable(), { 5, -6 })
  local p = S.path("b32.t7")
  local d = torch.DiskFile(p, "w"):binary():longSize(4)
  d:writeObject({ torch.DoubleTensor(2):fill(1.5) })
  d:close()
  local r = torch.load(p, "b32")
  T.eq(r[1]:totable(), { 1.5, 1.5 })
  T.raises(function() torch.load(p) end, "load")     -- 8-byte longs cannot read it
  T.raises(function() f:longSize(2) end, "longSize", "0, 4 or 8")
end)

T.test("byte order: bigEndianEncoding writes and reads most significant byte first", function()
  local f = torch.MemoryFile():binary():bigEndianEncoding()
  f:writeInt(1); f:writeDouble(2)
  T.eq(f:storage():string():sub(1, 4), "\0\0\0\1")
  f:writeObject({ torch.LongTensor(2):fill(7) })
  f:seek(1)
  T.eq(f:readInt(), 1); T.eq(f:readDouble(), 2); T.eq(f:readObject()[1]:totable(), { 7, 7 })
  T.eq(f:isLittleEndianCPU(), true); T.eq(f:isBigEndianCPU(), false)
  f:nativeEndianEncoding(); f:seek(1)
  T.eq(f:readInt(), 16777216)
  T.ok(rawequal(f:noBuffer(), f))
end)

T.test("readString, writeString, seek, position, seekEnd", function()
  local p = S.path("text.txt")
  local f = torch.DiskFile(p, "w")
  T.eq(f:writeString("line one\nline two\n"), 18)
  f:close()
  f = torch.DiskFile(p, "r")
  T.eq(f:readString("*l"), "line one")
  T.eq(f:position(), 10)
  T.eq(f:readString("*a"), "line two\n")
  f:seek(6)
  T.eq(f:readString(3), "one")
  f:seekEnd()
  T.eq(f:position(), 19)
  T.raises(function() f:readString("*l") end, "readString", "read error")
  T.raises(function() f:readString("*n") end, "readString", "format")
  T.raises(function() f:writeString("x") end, "writeString", "read-only")
  f:close()
  local rw = torch.DiskFile(p, "rw")
  rw:seek(6); rw:writeString("ONE"); rw:close()
  T.eq(S.read(p), "line ONE\nline two\n")
end)

T.test("PipeFile: a command's output, and input to a command", function()
  local f = torch.PipeFile("printf '12 34\\nrest'", "r")
  T.eq(f:readInt(), 12); T.eq(f:readInt(), 34)
  T.eq(f:readString("*a"), "rest")
  T.raises(function() f:seek(1) end, "seek", "pipe")
  f:close()
  local p = S.path("piped.t7")
  local w = torch.PipeFile("cat > " .. p, "w"):binary()
  w:writeObject({ 1, "two" })
  w:close()
  T.eq(torch.load(p), { 1, "two" })
  T.eq(torch.typename(w), "torch.PipeFile")
  T.ok(torch.isTypeOf(w, "torch.File"))
end)

T.test("MemoryFile:storage() and MemoryFile(storage)", function()
  local f = torch.MemoryFile("w")
  f:writeString("abc")
  local s = f:storage()
  T.eq(torch.typename(s), "torch.CharStorage"); T.eq(#s, 4); T.eq(s[4], 0)
  local g = torch.MemoryFile(s, "r")
  T.eq(g:readString("*a"), "abc")
  T.raises(function() g:writeInt(1) end, "writeInt", "read-only")
  T.raises(function() f:readInt() end, "readInt", "write-only")
  T.eq(torch.CharStorage():string("hey"):string(), "hey")
end)

T.test("bad input: modes, past the end, closed files, not t7, functions", function()
  T.raises(function() torch.DiskFile(S.path("x"), "a") end, "DiskFile", "mode")
  T.raises(function() torch.MemoryFile("x") end, "MemoryFile", "mode")
  T.raises(function() torch.PipeFile("true", "rw") end, "PipeFile", "mode")
  T.raises(function() torch.serialize({}, "text") end, "serialize", "mode")
  T.raises(function() torch.save(S.path("x.t7"), {}, "text") end, "save", "mode")
  T.raises(function() torch.load(S.path("x.t7"), "b16") end, "load", "mode")
  T.raises(function() torch.DiskFile(S.path("missing"), "r") end, "DiskFile", "cannot open", "missing")
  T.eq(torch.DiskFile(S.path("missing"), "r", true), nil)           -- quiet: nil
  local e = torch.MemoryFile()
  T.raises(function() e:readInt() end, "readInt", "read error")
  T.raises(function() e:readDouble(3) end, "readDouble", "read 0 blocks instead of 3")
  e:quiet()
  T.eq(e:readInt(), 0); T.eq(e:hasError(), true)
  e:clearError(); T.eq(e:hasError(), false)
  T.eq(#e:readInt(4), 0); T.eq(e:hasError(), true)
  e:close()
  T.raises(function() e:readInt() end, "readInt", "closed file")
  T.raises(function() e:writeObject(1) end, "writeObject", "closed file")
  T.raises(function() torch.deserialize("hello, not a t7 file") end, "readObject")
  T.raises(function() torch.deserialize(torch.serialize({ 1, 2 }):sub(1, 20)) end, "readObject", "truncated")
  local msg = T.raises(function() torch.serialize({ f = print }) end, "writeObject", "function", "<?>.f")
  T.ok(msg:find("unwritable", 1, true))
  T.raises(function() torch.save(S.path("fn.t7"), { inner = { g = function() end } }) end, "<?>.inner.g")
  T.eq(io.open(S.path("fn.t7")), nil)                                -- no half-written file left
  torch.save(S.path("keep.t7"), { 1 })
  T.raises(function() torch.save(S.path("keep.t7"), { print }) end, "unwritable")
  T.eq(torch.load(S.path("keep.t7")), { 1 })                         -- the old file stays
  T.raises(function() torch.save(S.dir .. "/no/such/dir/x.t7", 1) end, "save")
  T.raises(function() torch.serialize(torch.BoolTensor(2)) end, "writeObject", "torch.BoolTensor")
  T.raises(function() torch.deserialize(torch.serialize({ 1 }), "ascii") end, "readObject")
  local f = torch.MemoryFile()
  T.raises(function() f:writeInt("x") end, "writeInt", "number")
  T.raises(function() f:writeInt(torch.FloatStorage(2)) end, "writeInt", "IntStorage")
  T.raises(function() f:seek(100) end, "seek")
  -- a file holding a function (as Torch7 wrote one) is refused, not run
  local fn = "\6\0\0\0" .. "\1\0\0\0" .. "\5\0\0\0" .. "\27Lua!"
  T.raises(function() torch.deserialize(fn) end, "readObject", "function", "never loads code")
  local cls = torch.serialize(Point())
  T.raises(function() torch.deserialize((cls:gsub("t7test%.Point", "t7test.Nopes"))) end, "unknown Torch class <t7test.Nopes>")
end)

T.test("torch.load still reads lutorch's own format in this mode", function()
  local p = S.path("own.lt")
  torch.serialization._save(p, { x = torch.DoubleTensor(2):fill(4) })
  local r = torch.load(p)
  T.eq(r.x:totable(), { 4, 4 })
end)

T.test("torch.load makes Torch7's nn classes as Torch7 mode's nn has them", function()
  if not ref_ok then T.skip("nn classes", "python3 is not available"); return end
  os.execute("python3 tests/ref/t7_writer.py " .. S.dir .. " >/dev/null")
  local exp = dofile(S.path("expected.lua"))
  for _, fmt in ipairs({ "bin", "ascii" }) do
    local m = torch.load(S.path("mlp." .. fmt .. ".t7"))
    local y = m:forward(torch.Tensor(exp.mlp.input))
    T.near(y:totable(), exp.mlp.output, 1e-12)
    T.raises(function() torch.load(S.path("unknown." .. fmt .. ".t7")) end, "unknown Torch class <nn.NoSuchLayer>")
    T.raises(function() torch.load(S.path("function." .. fmt .. ".t7")) end, "function", "never loads code")
  end
end)

S.remove()
T.done()
