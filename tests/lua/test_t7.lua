-- Torch7 .t7 files (binary and ascii) made by a reference writer (tests/ref/t7_writer.py):
-- tensors and storages of every type, views, shared storages, tables with cycles, nn models
-- that must compute what their weights imply; hostile and corrupted files.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local nn = require "nn"
local F = nn.functional

local S = T.scratch()
local dir, path, write, read = S.dir, S.path, S.write, S.read

local have_py = os.execute("python3 -c 'import struct' >/dev/null 2>&1") == true
local exp
if have_py then
  local ok = os.execute("python3 tests/ref/t7_writer.py " .. dir .. " >/dev/null")
  if ok then exp = dofile(path("expected.lua")) end
end
local function need_ref(name)
  if exp then return true end
  T.skip(name, "python3 is not available to run tests/ref/t7_writer.py")
  return false
end

for _, fmt in ipairs({ "bin", "ascii" }) do
  local function file(n) return path(n .. "." .. fmt .. ".t7") end
  local opts = { format = fmt == "bin" and "binary" or "ascii" }

  T.test(fmt .. ": tensors and storages of every Torch7 type", function()
    if not need_ref(fmt .. " tensors") then return end
    for _, o in ipairs({ {}, opts }) do   -- detected and given format
      local t = torch.load_t7(file("tensors"), o)
      local dts = { Double = "float64", Float = "float32", Half = "float16", Long = "int64", Int = "int32",
                    Short = "int16", Char = "int8", Byte = "uint8" }
      for kind, dt in pairs(dts) do
        T.tensor(t[kind], exp[kind], { dtype = dt, shape = { 2, 3 } })
      end
      T.tensor(t.transposed, exp.transposed, { dtype = "float64" })
      T.tensor(t.offset, exp.offset, { dtype = "float64" })
      T.tensor(t.expanded, exp.expanded, { dtype = "float32" })
      T.tensor(t.storage, { 7, 8, 9 }, { dtype = "int64" })
      T.eq(t.empty:numel(), 0)
      T.eq(t.numbers, { 1, 2.5, -3, 1e300 })
      T.eq(math.type(t.numbers[1]), "integer", "whole numbers become integers")
      T.eq(t.strings.a, "hello")
      T.eq(t.strings.nl, "\nline\n", "strings with newlines")
      T.eq(t.strings[""], "empty key")
      T.eq(t.flags, { true, false })
      -- two views of one storage stay views of one storage
      T.tensor(t.shared_b, { { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } })
      t.shared_a[6] = 60
      T.eq(t.shared_b[2][2], 60, "shared storage")
      T.eq(t.offset[1][1], 60, "the offset view shares it too")
    end
  end)

  T.test(fmt .. ": tables with cycles and shared subtables", function()
    if not need_ref(fmt .. " cycles") then return end
    local c = torch.load_t7(file("cycle"))
    T.ok(c.self == c, "self reference")
    T.ok(c.child.parent == c, "cycle through a child")
    T.ok(c.shared == c.child.shared, "shared subtable")
    T.eq(c.name, "root")
    T.eq(c.n, 3.5)
    T.eq(c.list, { 1, 2, 3 })
  end)

  T.test(fmt .. ": nn.Sequential{Linear, ReLU, Linear} computes what its weights imply", function()
    if not need_ref(fmt .. " mlp") then return end
    local m = torch.load_t7(file("mlp"))
    T.ok(nn.isinstance(m, nn.Sequential), "a Sequential")
    T.ok(nn.isinstance(m[1], nn.Linear) and nn.isinstance(m[2], nn.ReLU) and nn.isinstance(m[3], nn.Linear), "children")
    T.eq(m[1].weight.dtype.name, "float64", "DoubleTensor weights stay float64")
    local x = torch.tensor(exp.mlp.input, { dtype = torch.float64 })
    T.near(m(x):detach():totable(), exp.mlp.output, 1e-12)
    T.near(m:forward(x):detach():totable(), exp.mlp.output, 1e-12, "Torch7's forward")
    T.eq(#m:parameters(), 4)
  end)

  T.test(fmt .. ": a convnet of Torch7 classes (MM convolution, pooling, View, BatchNorm)", function()
    if not need_ref(fmt .. " convnet") then return end
    local m = torch.load_t7(file("convnet"))
    T.eq(m.training, false, "train=false loads in eval mode")
    local e = exp.convnet
    local x = torch.linspace(-1, 1, 2 * 16, { dtype = torch.float64 }):reshape(2, 1, 4, 4)
    local w = torch.tensor(e.conv_w, { dtype = torch.float64 }):reshape(2, 1, 3, 3)
    local y = F.conv2d(x, w, torch.tensor(e.conv_b, { dtype = torch.float64 }), 1, 1)
    y = F.max_pool2d(F.relu(y), 2):reshape(2, 8)
    y = F.linear(y, torch.tensor(e.lin_w, { dtype = torch.float64 }), torch.tensor(e.lin_b, { dtype = torch.float64 }))
    local rm, rv = torch.tensor({ 0.1, -0.1, 0.2 }, { dtype = torch.float64 }), torch.tensor({ 1.0, 2.0, 0.5 }, { dtype = torch.float64 })
    local g, b = torch.tensor({ 1.0, 0.5, 2.0 }, { dtype = torch.float64 }), torch.tensor({ 0.0, 0.1, -0.1 }, { dtype = torch.float64 })
    y = ((y - rm) / (rv + 1e-5):sqrt() * g + b):tanh()
    y = F.log_softmax(y, 2)
    T.near(m(x):detach():totable(), y:totable(), 1e-12)
  end)

  T.test(fmt .. ": functions and unknown classes are refused by name", function()
    if not need_ref(fmt .. " refusals") then return end
    T.raises(function() torch.load_t7(file("function")) end, "torch.load_t7", "function." .. fmt .. ".t7", "Lua function")
    T.raises(function() torch.load_t7(file("unknown")) end, "torch.load_t7", "'nn.NoSuchLayer'")
  end)
end

T.test("format and options", function()
  if not need_ref("format options") then return end
  T.raises(function() torch.load_t7(path("mlp.bin.t7"), { format = "ascii" }) end, "torch.load_t7", "mlp.bin.t7")
  T.raises(function() torch.load_t7(path("mlp.ascii.t7"), { format = "binary" }) end, "torch.load_t7", "mlp.ascii.t7")
  T.raises(function() torch.load_t7(path("mlp.bin.t7"), { format = "xml" }) end, "torch.load_t7", "format")
  T.raises(function() torch.load_t7(path("mlp.bin.t7"), { long_size = 3 }) end, "torch.load_t7", "long_size")
  T.raises(function() torch.load_t7(path("missing.t7")) end, "torch.load_t7", "missing.t7")
  T.raises(function() torch.load_t7(3) end, "torch.load_t7", "path")
end)

-- binary helpers for hand-made hostile files
local function I(v) return string.pack("<i4", v) end
local function L(v) return string.pack("<i8", v) end
local function Dd(v) return string.pack("<d", v) end
local function S(s) return I(#s) .. s end
local function torch_obj(idx, cls) return I(4) .. I(idx) .. S("V 1") .. S(cls) end

T.test("hostile files: clear errors, no crash, no huge allocation", function()
  local function bad(name, bytes, ...)
    local p = write(name, bytes)
    T.raises(function() torch.load_t7(p) end, "torch.load_t7", name, ...)
  end
  bad("empty.t7", "", "empty")
  bad("tag.t7", I(42), "unknown type tag 42")
  bad("short.t7", I(1) .. "\0\0", "truncated")
  bad("bigtable.t7", I(3) .. I(1) .. I(0x7fffffff), "table of 2147483647 entries")
  bad("negtable.t7", I(3) .. I(1) .. I(-5), "table of -5 entries")
  bad("bigstring.t7", I(2) .. I(0x7fffffff) .. "abc", "truncated")
  bad("negstring.t7", I(2) .. I(-1), "negative length")
  bad("bigstorage.t7", torch_obj(1, "torch.DoubleStorage") .. L(1 << 60), "truncated")
  bad("negstorage.t7", torch_obj(1, "torch.FloatStorage") .. L(-3), "negative storage size")
  bad("dims.t7", torch_obj(1, "torch.FloatTensor") .. I(17), "17 dimensions")
  bad("beyond.t7", torch_obj(1, "torch.FloatTensor") .. I(1) .. L(10) .. L(1) .. L(1)
    .. torch_obj(2, "torch.FloatStorage") .. L(3) .. string.pack("<fff", 1, 2, 3), "reaches element 10 of a storage of 3")
  bad("overflow.t7", torch_obj(1, "torch.FloatTensor") .. I(2) .. L(1 << 40) .. L(1 << 40) .. L(1) .. L(1) .. L(1)
    .. torch_obj(2, "torch.FloatStorage") .. L(1) .. string.pack("<f", 1), "overflows")
  bad("mismatch.t7", torch_obj(1, "torch.FloatTensor") .. I(1) .. L(1) .. L(1) .. L(1)
    .. torch_obj(2, "torch.DoubleStorage") .. L(1) .. Dd(1), "a torch.FloatTensor over a torch.DoubleStorage")
  bad("nostorage.t7", torch_obj(1, "torch.FloatTensor") .. I(1) .. L(2) .. L(1) .. L(1) .. I(0), "reaches element 2")
  bad("notstorage.t7", torch_obj(1, "torch.FloatTensor") .. I(1) .. L(2) .. L(1) .. L(1) .. I(1) .. Dd(3), "not a storage")
  bad("classname.t7", I(4) .. I(1) .. S("V 1") .. S(string.rep("x", 300)), "class name")
  bad("generator.t7", torch_obj(1, "torch.Generator") .. "\0\0\0\0", "'torch.Generator'")
  bad("trailing.t7", I(1) .. Dd(3) .. "junk", "after its object")
  bad("nilkey.t7", I(3) .. I(1) .. I(1) .. I(0) .. I(1) .. Dd(1), "nil or NaN key")
  bad("selfmodule.t7", torch_obj(1, "nn.Sequential") .. I(3) .. I(2) .. I(1) .. I(2) .. S("modules") .. I(3) .. I(3) .. I(1)
    .. I(1) .. Dd(1) .. I(4) .. I(1), "from inside its own fields")
  -- nesting a million deep (binary) and deep in ascii: refused at a fixed depth
  local deep = {}
  for i = 1, 100000 do deep[#deep + 1] = I(3) .. I(i) .. I(1) .. I(1) .. Dd(1) end
  bad("deep.t7", table.concat(deep) .. I(0), "more than 400 deep")
  local adeep = {}
  for i = 1, 20000 do adeep[#adeep + 1] = ("3\n%d\n1\n1\n1\n"):format(i) end
  bad("deep_ascii.t7", table.concat(adeep) .. "0\n", "more than 400 deep")
  local t = torch.load_t7(write("ok.t7", I(3) .. I(1) .. I(1) .. I(1) .. Dd(1) .. I(3) .. I(1)))
  T.ok(t[1] == t, "a table holding itself")
end)

T.test("corrupted files: every truncation is an error, flipped bytes never crash", function()
  if not need_ref("corrupted t7") then return end
  for _, n in ipairs({ "mlp.bin.t7", "cycle.ascii.t7", "tensors.ascii.t7" }) do
    local good = read(path(n))
    local step = #good > 2000 and 4 or #good > 1000 and 2 or 1
    for cut = 0, #good - 1, step do
      local q = write("cut.t7", good:sub(1, cut))
      local ok, err = pcall(torch.load_t7, q)
      -- an ascii file cut inside its last number can still parse: only a crash or a non-error result that
      -- differs is a failure there; binary cuts must all fail
      if ok and n:find("bin") then error(n .. " truncated at " .. cut .. " loaded") end
      if not ok then T.ok(tostring(err):find("torch.load_t7: ", 1, true), err) end
    end
  end
  local good = read(path("tensors.bin.t7"))
  for i = 1, #good do
    local q = write("flip.t7", good:sub(1, i - 1) .. string.char(good:byte(i) ~ 0xff) .. good:sub(i + 1))
    local ok, err = pcall(torch.load_t7, q)
    if not ok then T.ok(tostring(err):find("torch.load_t7: ", 1, true), err) end
  end
end)

os.execute("rm -rf " .. dir)
T.done()
